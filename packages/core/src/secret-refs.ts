/**
 * @module secret-refs — a job's own environment variables and its references to named secrets. A reference
 * (`{ "secret": "billing-db" }`, with an optional `"format": "Bearer {}"`) is stored and shown as the name only; the
 * worker resolves it at the attempt (see packages/runner/src/secrets.ts), so a value is never in a job, a version, an
 * execution or an event.
 */

/** A reference to a named secret; `format` (one `{}`) wraps its value, e.g. `Bearer {}`. */
export interface SecretRef {
  secret: string;
  format?: string;
}

/** An environment variable's value: plain text, or a secret resolved at the attempt. */
type EnvValue = string | SecretRef;

/** A job's own variables, by name. */
export type JobEnv = Record<string, EnvValue>;

/** Names of secrets: lower-case letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most 100. */
export const SECRET_NAME = /^[a-z0-9][a-z0-9._-]{0,99}$/;

/** Names of a job's variables. */
const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
export const MAX_ENV_VARS = 100;
const MAX_ENV_NAME_CHARS = 128;
export const MAX_ENV_VALUE_CHARS = 32 * 1024;
/** All names and plain values of one job together. */
export const MAX_ENV_BYTES = 128 * 1024;

export function isSecretRef(value: unknown): value is SecretRef {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  const ref = value as Record<string, unknown>;
  return (
    typeof ref.secret === 'string' &&
    keys.every((k) => k === 'secret' || k === 'format') &&
    (ref.format === undefined || typeof ref.format === 'string')
  );
}

/**
 * Why a job may not set `name` (null: it may). The JOB_* identity and TRACEPARENT are the scheduler's to set, and the
 * scheduler's own configuration is never a job's.
 */
export function envNameProblem(name: string, privateEnv: RegExp): string | null {
  if (name.length > MAX_ENV_NAME_CHARS) return `names are at most ${MAX_ENV_NAME_CHARS} characters`;
  if (!ENV_NAME.test(name)) return 'names are upper-case letters, digits and _, not starting with a digit';
  if (name.startsWith('JOB_')) return 'JOB_* variables are set by the scheduler on every attempt';
  if (name === 'TRACEPARENT' || name === 'TRACESTATE') return `${name} is set by the scheduler (the attempt's trace)`;
  if (privateEnv.test(name)) return `${name} is the scheduler's own configuration`;
  return null;
}

/** The value with `{}` in `format` replaced by it (the first `{}`; no format: the value itself). */
export function formatSecret(ref: SecretRef, value: string): string {
  if (ref.format === undefined) return value;
  const at = ref.format.indexOf('{}');
  return at < 0 ? ref.format : ref.format.slice(0, at) + value + ref.format.slice(at + 2);
}

/**
 * The names of the secrets these values reference.
 * @public Not called yet: the job secrets work wires it in; drop this tag then.
 */
export function referencedSecrets(values: Iterable<unknown>): string[] {
  const names = new Set<string>();
  for (const value of values) if (isSecretRef(value)) names.add(value.secret);
  return [...names];
}
