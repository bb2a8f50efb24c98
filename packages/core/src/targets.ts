/**
 * @module targets — what a job runs (exactly one of a command, a handler, an HTTP request, a Lambda invocation), how
 * it reads in words, and the one function that masks secret-looking header values wherever a target is shown.
 */

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
type HttpMethod = (typeof HTTP_METHODS)[number];

export interface HttpTarget {
  url: string;
  method: HttpMethod;
  headers: Record<string, string>;
  /** Sent as is when a string, JSON-encoded otherwise; absent (undefined): the execution's payload as JSON. */
  body?: unknown;
}

export interface LambdaTarget {
  /** A function name, or a full or partial ARN. */
  function: string;
  /** A version or alias; null: the unqualified function. */
  qualifier: string | null;
}

/** Headers the scheduler sets on every HTTP request (lower case): a target may not set them itself. */
export const RESERVED_HEADERS: readonly string[] = [
  'jobs-job-id',
  'jobs-execution-id',
  'jobs-attempt',
  'jobs-signature',
  'idempotency-key',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
];

/** The target fields of a job (exactly one is set). */
export interface JobTarget {
  command: string | null;
  handler: string | null;
  http: HttpTarget | null;
  lambda: LambdaTarget | null;
}

/**
 * The target in words, as lists and pages show it.
 * @example targetWords({ http: { method: 'POST', url: 'https://api.example.com/hooks/nightly', headers: {} }, ... })
 *   // 'POST https://api.example.com/hooks/nightly'
 * @example targetWords({ lambda: { function: 'billing-close', qualifier: 'live' }, ... }) // 'invoke billing-close:live'
 */
export function targetWords(target: JobTarget): string {
  if (target.http) return `${target.http.method} ${target.http.url}`;
  if (target.lambda)
    return `invoke ${target.lambda.function}${target.lambda.qualifier ? `:${target.lambda.qualifier}` : ''}`;
  if (target.handler) return `handler ${target.handler}`;
  if (target.command) return `run ${target.command}`;
  return 'nothing';
}

/** What a masked header value reads as (an edit form that sends it back unchanged means "keep the stored value"). */
export const MASKED = '********';

/**
 * Header names whose values are credentials: authorization, cookies, anything ending in `-key` or `key`, anything with
 * `token`, `secret`, `password`, `signature`, `session` or `credential` in it.
 */
const SECRET_HEADER =
  /^(authorization|proxy-authorization|cookie|set-cookie)$|key$|token|secret|passw(or)?d|signature|session|credential|auth/i;

function isSecretHeader(name: string): boolean {
  return SECRET_HEADER.test(name);
}

/** A copy of `headers` with every secret-looking value replaced by MASKED. The one masking function. */
export function maskHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = isSecretHeader(name) ? MASKED : value;
  return out;
}

/** The target as it may be shown (API responses, pages, logs): HTTP header secrets masked, nothing else changed. */
export function maskTarget<T extends Partial<JobTarget>>(target: T): T {
  if (!target.http) return target;
  return { ...target, http: { ...target.http, headers: maskHeaders(target.http.headers) } };
}

/**
 * A recorded change (a job version's, a plan's) as anyone may see it: an `http` target's secret header values masked
 * on both sides. Every reader of job_versions goes through it: the API, the dashboard.
 */
export function maskChange<C extends { field: string; old: unknown; new: unknown }>(change: C): C {
  if (change.field !== 'http') return change;
  const mask = (value: unknown) =>
    value && typeof value === 'object' && 'headers' in value
      ? maskTarget({ http: value as JobTarget['http'] }).http
      : value;
  return { ...change, old: mask(change.old), new: mask(change.new) };
}

/**
 * `spec` with every header value sent back masked (as responses and prefilled forms show it) replaced by the stored
 * value of that header in `current`: an edit that does not retype a secret keeps it.
 */
export function keepMaskedHeaders<S extends { http?: JobTarget['http'] }>(
  spec: S,
  current: { http?: JobTarget['http'] },
): S {
  if (!spec.http || !current.http) return spec;
  const stored = new Map(Object.entries(current.http.headers).map(([name, value]) => [name.toLowerCase(), value]));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(spec.http.headers))
    headers[name] = value === MASKED ? (stored.get(name.toLowerCase()) ?? value) : value;
  return { ...spec, http: { ...spec.http, headers } };
}
