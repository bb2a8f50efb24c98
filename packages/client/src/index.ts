/**
 * @module @jobs/client — a typed client of the REST API: openapi-fetch over the types generated from the OpenAPI
 * document (schema.generated.ts, written by `npm run gen`), plus the `jobs` CLI's commands (cli/).
 * @example
 *   const api = createJobsClient({ baseUrl: 'http://localhost:8080', apiKey: process.env.JOBS_API_KEY });
 *   const { data, error } = await api.GET('/api/v1/jobs/{id}', { params: { path: { id: '1' } } });
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.generated';

export type { components, operations, paths } from './schema.generated';
export type JobsClient = Client<paths>;
export type Job = components['schemas']['Job'];
export type JobCreate = components['schemas']['JobCreate'];
export type Execution = components['schemas']['Execution'];
export type ApiErrorBody = components['schemas']['Error'];

export interface ClientOptions {
  /** The deployment's root URL (the paths carry /api/v1). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`; leave out for an open local API. */
  apiKey?: string;
  /** Each request gives up after this long (default 30 s). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export function createJobsClient(options: ClientOptions): JobsClient {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const baseFetch = options.fetch ?? fetch;
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {},
    fetch: (request: Request) => baseFetch(request, { signal: AbortSignal.timeout(timeoutMs) }),
  });
}

/** The API's error message of a failed call (its JSON error shape), or the HTTP status. */
export function errorMessage(error: unknown, response: Response): string {
  const body = error as Partial<ApiErrorBody> | undefined;
  const details = body?.error?.details?.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; ');
  if (body?.error?.message)
    return details && !body.error.message.includes(details) ? `${body.error.message} (${details})` : body.error.message;
  return `HTTP ${response.status}`;
}
