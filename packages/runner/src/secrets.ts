/**
 * @module secrets — resolves an attempt's secret references just before it runs, and keeps the values out of what it
 * leaves behind. References sit in a command's `env`, an HTTP target's header values and a Lambda target's top-level
 * payload fields; the attempt runs with the values in their place, and every occurrence of a value in its output
 * (stored and live) and its error is replaced by MASKED. An attempt without references runs untouched.
 */
import {
  MASKED,
  formatSecret,
  isSecretRef,
  type LiveOutputSink,
  type RunResult,
  type StartedExecution,
} from '@jobs/core';

/** Where the worker reads secret values (decrypted at the attempt). */
export interface SecretSource {
  /** The values of these secrets, by name; a name that does not exist is left out. */
  values(names: readonly string[]): Promise<Map<string, string>>;
}

/** The secrets an attempt references (none: it runs as is). */
export function attemptSecretNames(execution: StartedExecution): string[] {
  const names = new Set<string>();
  const add = (value: unknown) => {
    if (isSecretRef(value)) names.add(value.secret);
  };
  if (execution.command && execution.env) for (const value of Object.values(execution.env)) add(value);
  if (execution.http) for (const value of Object.values(execution.http.headers)) add(value);
  if (execution.lambda && isPlainObject(execution.payload))
    for (const value of Object.values(execution.payload)) add(value);
  return [...names];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A failed attempt that a retry may fix (the secret may be created meanwhile). */
function unresolved(error: string): RunResult {
  return { ok: false, exitCode: null, output: '', error };
}

/**
 * The attempt with its references replaced by their values, and the values to mask; or the failed result when a
 * secret is missing or this worker has no source.
 */
export async function resolveAttempt(
  execution: StartedExecution,
  names: readonly string[],
  source: SecretSource | null,
): Promise<{ execution: StartedExecution; values: string[] } | RunResult> {
  if (!source) {
    return unresolved(
      `secret ${JSON.stringify(names[0])} cannot be read: this worker has no SECRETS_KEY (see docs/security.md)`,
    );
  }
  let found: Map<string, string>;
  try {
    found = await source.values(names);
  } catch (error) {
    return unresolved(`secrets could not be read: ${error instanceof Error ? error.message : String(error)}`);
  }
  const missing = names.filter((name) => !found.has(name));
  if (missing.length > 0) {
    return unresolved(
      `secret ${missing.map((n) => JSON.stringify(n)).join(', ')} does not exist (deleted, or never created): ` +
        'create it with PUT /api/v1/secrets/{name}; the attempt is retried like any failure',
    );
  }
  const resolve = (value: unknown) => (isSecretRef(value) ? formatSecret(value, found.get(value.secret)!) : value);
  const mapValues = <V>(record: Record<string, V>) =>
    Object.fromEntries(Object.entries(record).map(([k, v]) => [k, resolve(v)]));
  const resolved: StartedExecution = { ...execution };
  if (execution.env) resolved.env = mapValues(execution.env) as Record<string, string>;
  if (execution.http)
    resolved.http = { ...execution.http, headers: mapValues(execution.http.headers) as Record<string, string> };
  if (execution.lambda && isPlainObject(execution.payload)) resolved.payload = mapValues(execution.payload);
  // Longest first, so a value that contains another is masked whole.
  const values = [...found.values()].filter((v) => v.length > 0).sort((a, b) => b.length - a.length);
  return { execution: resolved, values };
}

/** `text` with every occurrence of each value replaced by MASKED. */
function maskValues(text: string, values: readonly string[]): string {
  let out = text;
  for (const value of values) if (out.includes(value)) out = out.split(value).join(MASKED);
  return out;
}

export function maskResult(result: RunResult, values: readonly string[]): RunResult {
  return {
    ...result,
    output: maskValues(result.output, values),
    error: result.error === null ? null : maskValues(result.error, values),
  };
}

/**
 * The live output of an attempt with its values masked chunk by chunk. A command's output arrives in whole lines
 * (stream-lines.ts), so a value is masked unless it spans a newline or a line longer than 8 KiB is cut inside it.
 */
export function maskingSink(sink: LiveOutputSink | null, values: readonly string[]): LiveOutputSink | null {
  if (!sink) return null;
  return {
    append(id, chunk) {
      const text = chunk.toString('utf8');
      const masked = maskValues(text, values);
      sink.append(id, masked === text ? chunk : Buffer.from(masked));
    },
    end: (id) => sink.end(id),
  };
}
