/** @module @jobs/api — the REST API: createApp(deps) returns a Hono app (served by Node locally, by Lambda on AWS). */
export { createApp, API_PREFIX, API_VERSION, type App } from './app';
export type { ApiDeps, ApiEnv } from './deps';
export { ApiError, type ErrorBody, type ErrorDetail } from './errors';
