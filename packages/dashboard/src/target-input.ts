/**
 * @module dashboard/target-input — the job form's target fields (command or handler, HTTP request, Lambda function):
 * their defaults, how they become the API body's `command`/`handler`/`http`/`lambda`, where the API's problems land,
 * and a job's target as form values (for a form prefilled from a job; secret header values come back masked).
 */
import { maskTarget, type Job } from '@jobs/core';

const TARGET_KINDS = ['command', 'http', 'lambda'] as const;
type FormTargetKind = (typeof TARGET_KINDS)[number];

export const TARGET_FIELDS = [
  'target',
  'http_method',
  'http_url',
  'http_headers',
  'http_body',
  'lambda_function',
  'lambda_qualifier',
] as const;
export type TargetField = (typeof TARGET_FIELDS)[number];

export const TARGET_FORM_DEFAULTS: Record<TargetField, string> = {
  target: 'command',
  http_method: 'POST',
  http_url: '',
  http_headers: '',
  http_body: '',
  lambda_function: '',
  lambda_qualifier: '',
};

/** Multi-line fields (browsers send their line breaks as CRLF). */
export const TARGET_TEXTAREAS: readonly TargetField[] = ['http_headers', 'http_body'];

type Values = Record<TargetField | 'command' | 'handler', string>;

/** `Name: value` lines as a headers object; a line that is neither blank nor a header is a problem. */
function parseHeaderLines(text: string): { headers: Record<string, string>; problem: string | null } {
  const headers: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) return { headers, problem: `line ${i + 1} is not "Name: value"` };
    // Defined, not assigned: `__proto__` stays an own key, so the API's schema refuses it instead of losing it.
    Object.defineProperty(headers, line.slice(0, colon).trim(), {
      value: line.slice(colon + 1).trim(),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { headers, problem: null };
}

/**
 * Sets the target of the API create body from the form. `command` (the default) sends the command and the handler
 * as typed (the API wants exactly one); `http` and `lambda` send only their own fields.
 */
export function putTarget(
  values: Values,
  body: Record<string, unknown>,
  errors: Partial<Record<TargetField, string>>,
): void {
  const kind = (TARGET_KINDS as readonly string[]).includes(values.target)
    ? (values.target as FormTargetKind)
    : 'command';
  if (kind === 'command') {
    if (values.command.trim() !== '') body.command = values.command;
    if (values.handler.trim() !== '') body.handler = values.handler;
  } else if (kind === 'http') {
    const { headers, problem } = parseHeaderLines(values.http_headers);
    if (problem) errors.http_headers = problem;
    const http: Record<string, unknown> = { url: values.http_url.trim(), method: values.http_method, headers };
    const raw = values.http_body;
    // JSON when it reads as an object or array, otherwise the text as typed; empty: the payload.
    if (raw.trim() !== '') http.body = /^\s*[[{]/.test(raw) ? jsonOr(raw) : raw;
    body.http = http;
  } else {
    body.lambda = {
      function: values.lambda_function.trim(),
      ...(values.lambda_qualifier.trim() ? { qualifier: values.lambda_qualifier.trim() } : {}),
    };
  }
}

function jsonOr(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** The form field an API problem path (`http.headers.X-Key`, `lambda`) belongs to, or null when not a target's. */
export function targetFieldOf(path: string): TargetField | null {
  if (path === 'http' || path === 'http.url') return 'http_url';
  if (path.startsWith('http.headers')) return 'http_headers';
  if (path === 'http.method') return 'http_method';
  if (path.startsWith('http.body')) return 'http_body';
  if (path === 'lambda' || path === 'lambda.function') return 'lambda_function';
  if (path === 'lambda.qualifier') return 'lambda_qualifier';
  return null;
}

/** A job's target as the form's values (for a form prefilled from the job). Secret header values are masked. */
export function targetFormValues(unmasked: Job): Values {
  const job = maskTarget(unmasked);
  const values: Values = { ...TARGET_FORM_DEFAULTS, command: job.command ?? '', handler: job.handler ?? '' };
  if (job.http) {
    values.target = 'http';
    values.http_method = job.http.method;
    values.http_url = job.http.url;
    values.http_headers = Object.entries(job.http.headers)
      .map(([name, value]) => `${name}: ${value}`)
      .join('\n');
    if (job.http.body !== undefined)
      values.http_body = typeof job.http.body === 'string' ? job.http.body : JSON.stringify(job.http.body, null, 2);
  } else if (job.lambda) {
    values.target = 'lambda';
    values.lambda_function = job.lambda.function;
    values.lambda_qualifier = job.lambda.qualifier ?? '';
  }
  return values;
}
