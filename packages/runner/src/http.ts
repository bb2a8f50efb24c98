/**
 * @module http — the HTTP target adapter: one request per attempt, through the guarded agent, signed, bounded by the
 * attempt's timeout, with the response's status line, the headers that matter and its body (capped) as output.
 *
 * Outcome rules: 2xx succeeds; 408, 429, 5xx, connection errors and timeouts fail and are retried by the job's policy
 * (a `Retry-After` sets the earliest retry); a redirect (not followed), any other 4xx and a refused address are final.
 */
import {
  createAddressPolicy,
  maskHeaders,
  type AddressPolicy,
  type Cancellation,
  type HttpTarget,
  type RunResult,
  type StartedExecution,
  type Tracing,
} from '@jobs/core';
import { STATUS_CODES } from 'node:http';
import type { Agent } from 'undici';
import { ADDRESS_REFUSED, guardedAgent } from './http-guard';
import { Aborted, send, type Sent } from './http-send';
import { CappedOutput, DEFAULT_OUTPUT_LIMIT } from './output';
import { signer } from './signing';
import { startTargetSpan } from './traced';

export interface HttpOptions {
  policy: AddressPolicy;
  /** HTTP_SIGNING_SECRET, split on commas: the first signs; empty: requests are not signed. */
  signingSecrets: readonly string[];
  /** Default: a guarded agent built from `policy`. */
  agent?: Agent;
  outputLimit?: number;
  now?: () => number;
  /** A client span per request (its traceparent is sent); null: tracing off. */
  tracing?: Tracing | null;
}

/** Response headers the output records (the rest are noise, or secrets such as Set-Cookie). */
const RECORDED_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  'content-length',
  'location',
  'retry-after',
  'x-request-id',
  'request-id',
  'x-amzn-requestid',
]);

const USER_AGENT = 'jobs-scheduler/0.1';

/** The bytes sent: the target's body (a string as is, anything else as JSON), or the execution's payload as JSON. */
function requestBody(target: HttpTarget, payload: unknown): { body: string; contentType: string } | null {
  if (target.method === 'GET') return null;
  // No payload and no body of its own: no body at all (never the literal `null`).
  if (target.body === undefined)
    return payload === null || payload === undefined
      ? null
      : { body: JSON.stringify(payload), contentType: 'application/json' };
  if (typeof target.body === 'string') return { body: target.body, contentType: 'text/plain; charset=utf-8' };
  return { body: JSON.stringify(target.body), contentType: 'application/json' };
}

/** Milliseconds a `Retry-After` value asks to wait (delta seconds or an HTTP date), or null when absent or unreadable. */
function retryAfterMs(value: string | string[] | undefined, nowMs: number): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  if (/^\s*\d+\s*$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/**
 * What an attempt needs of its target that does not change from one attempt to the next: the parsed URL, the
 * literal-address verdict and the headers the target itself sets. Kept per target object (the job-definition cache
 * hands every attempt of one job version the same one), so it dies with the cache entry.
 */
interface PreparedTarget {
  /** Why the target can never be sent (not a URL, a refused literal address), or null. */
  refused: string | null;
  origin: string;
  path: string;
  /** `origin + pathname` as errors quote it (never the query, which may carry secrets). */
  where: string;
  /** The target's own headers and ours that do not change, as a flat name, value list (undici's array form). */
  headers: string[];
  /** The body when the target fixes it (or has none); undefined: the execution's payload, per attempt. */
  body: { body: string; contentType: string } | null | undefined;
  /** Whether the headers above hold a content type (the target's own, or its fixed body's). */
  ownContentType: boolean;
  /** The last signature made for this target: the same body in the same second signs the same (HMAC is a function). */
  signed: { body: string; second: number; header: string } | null;
}

/** Headers every attempt sets itself: a target's own header of the same name is replaced, never sent beside it. */
const PER_ATTEMPT_HEADERS = ['jobs-job-id', 'jobs-execution-id', 'jobs-attempt', 'jobs-delivery', 'idempotency-key'];

function prepare(target: HttpTarget, policy: AddressPolicy, replaced: readonly string[]): PreparedTarget {
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    return {
      refused: `not a URL: ${JSON.stringify(target.url)}`,
      origin: '',
      path: '',
      where: '',
      headers: [],
      body: null,
      ownContentType: false,
      signed: null,
    };
  }
  // An IP literal never reaches the guarded lookup: it is checked here (a changed HTTP_TARGET_ALLOW, a legacy row).
  const literal = policy.refuseLiteralHost(url);
  const body = target.method === 'GET' || target.body !== undefined ? requestBody(target, null) : undefined;
  const headers: Record<string, string> = { 'user-agent': USER_AGENT };
  // A body that depends on the payload gets its content type per attempt (none when there is no payload).
  if (body) headers['content-type'] = body.contentType;
  for (const [name, value] of Object.entries(target.headers)) headers[name.toLowerCase()] = value;
  for (const name of replaced) delete headers[name];
  const ownContentType = 'content-type' in headers;
  return {
    refused: literal ? `refused: ${literal}` : null,
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
    where: `${url.origin}${url.pathname}`,
    headers: Object.entries(headers).flat(),
    body,
    ownContentType,
    signed: null,
  };
}

function fail(error: string, final: boolean, output = ''): RunResult {
  return { ok: false, exitCode: null, output, error, final };
}

/** The output's head: status line and the recorded response headers, secret-looking values masked. */
function responseHead(status: number, headers: Record<string, string>): string {
  let head = `HTTP ${status} ${STATUS_CODES[status] ?? ''}`.trimEnd() + '\n';
  for (const [name, value] of Object.entries(maskHeaders(headers))) head += `${name}: ${value}\n`;
  return head;
}

export function createHttpTarget(options: Partial<HttpOptions> = {}) {
  const policy = options.policy ?? createAddressPolicy();
  const agent = options.agent ?? guardedAgent(policy);
  const signing = (options.signingSecrets ?? []).length > 0;
  const sign = signer(options.signingSecrets ?? []);
  const limit = options.outputLimit ?? DEFAULT_OUTPUT_LIMIT;
  const now = options.now ?? Date.now;
  const tracing = options.tracing ?? null;
  const prepared = new WeakMap<HttpTarget, PreparedTarget>();
  // What each attempt sets replaces the target's own header of that name (signature and traceparent only when on).
  const replaced = [
    ...PER_ATTEMPT_HEADERS,
    ...(signing ? ['jobs-signature'] : []),
    ...(tracing ? ['traceparent'] : []),
  ];

  return async function runHttp(
    target: HttpTarget,
    execution: StartedExecution,
    cancel: Cancellation,
  ): Promise<RunResult> {
    let p = prepared.get(target);
    if (!p) prepared.set(target, (p = prepare(target, policy, replaced)));
    if (p.refused) return fail(p.refused, true);

    const request = p.body !== undefined ? p.body : requestBody(target, execution.payload);
    const headers = p.headers.slice();
    if (request && !p.ownContentType) headers.push('content-type', request.contentType);
    // The idempotency key is the same for every retry of one chain (a replay starts a new chain): receivers
    // deduplicate on it.
    headers.push(
      'jobs-job-id',
      execution.jobId,
      'jobs-execution-id',
      execution.id,
      'jobs-attempt',
      `${execution.attempt}`,
      // 1, or more when this attempt was given back at a shutdown (or lost with its worker) and is sent again.
      'jobs-delivery',
      `${execution.delivery}`,
      'idempotency-key',
      `jobs-${execution.rootId}`,
    );
    if (signing) {
      const bytes = request?.body ?? '';
      const nowMs = now();
      const second = Math.floor(nowMs / 1000);
      let signed = p.signed;
      if (signed === null || signed.second !== second || signed.body !== bytes)
        p.signed = signed = { body: bytes, second, header: sign(bytes, nowMs)! };
      headers.push('jobs-signature', signed.header);
    }

    const span = startTargetSpan(tracing, execution, { method: target.method, url: target.url });
    for (const name in span.headers) headers.push(name, span.headers[name]!);
    const body = new CappedOutput(limit);
    let sent: Sent;
    try {
      sent = await send(agent, body, {
        origin: p.origin,
        path: p.path,
        method: target.method,
        headers,
        body: request?.body,
        timeoutMs: execution.timeoutMs,
        keep: RECORDED_HEADERS,
        cancel,
      });
    } catch (error) {
      span.end({ error: 'request failed' });
      const code = (error as { code?: string }).code;
      if (code === ADDRESS_REFUSED) return fail(`refused: ${(error as Error).message}`, true);
      if (error instanceof Aborted) return fail(`aborted (${String(cancel.signal.reason)})`, false, body.toString());
      return fail(`${target.method} ${p.where}: ${describeError(error)}`, false, body.toString());
    }
    const status = sent.status;
    span.end({ status });
    const responseHeaders = sent.headers;
    if (sent.cut) body.markCut('[response body truncated: the rest was not read]');
    const text = `${responseHead(status, responseHeaders)}\n${body.toString()}`;
    if (status >= 200 && status < 300) return { ok: true, exitCode: null, output: text, error: null };
    const line = `HTTP ${status}${STATUS_CODES[status] ? ` ${STATUS_CODES[status]}` : ''}`;
    if (status >= 300 && status < 400) {
      const location = responseHeaders['location'];
      return fail(
        `${line}: redirects are not followed${location ? ` (Location: ${String(location)})` : ''}`,
        true,
        text,
      );
    }
    if (status === 408 || status === 429 || status >= 500) {
      return { ...fail(line, false, text), retryAfterMs: retryAfterMs(responseHeaders['retry-after'], now()) };
    }
    return fail(`${line} (final: a 4xx other than 408 and 429 is not retried)`, true, text);
  };
}

function describeError(error: unknown): string {
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code;
  if (code === 'ECONNREFUSED') return `connection refused (${e.message})`;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return `timed out (${e.message})`;
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'connect timed out';
  return `${code ? `${code}: ` : ''}${e.message ?? String(error)}`;
}
