/** @module @jobs/api — the REST API: createApp(deps) returns a Hono app (served by Node locally, by Lambda on AWS). */
export { createApp, commandDeps, API_PREFIX } from './app';
export { applyJobSpecs, type SpecResult } from './apply-specs';
export type { ApiDeps, ApiEnv, OutputFollowOptions } from './deps';
export { ApiError, toApiError, zodDetails, type ErrorDetail } from './errors';
// What the dashboard (@jobs/dashboard) shares with the API: the job schema and its conversion, keyset pages.
export { keysetPage } from './pagination';
export { OUTPUT_PAGE_BYTES, outputResponse } from './routes/output';
export { JobCreate } from './schemas/jobs';
export { bodyChanges, specBody, toJobSpec } from './serializers';
// Roles and keys, shared with the dashboard and with functions/config.ts.
export { accessOf, actorOf, OPEN_PRINCIPAL, refuseBelow, type RouteAccess } from './auth';
export { apiKeyList, keyFingerprint, keyMatcher, parseApiKeys, type ApiKey, type Principal } from './keys';
export { sourceAddress } from './source';
export { AUTH_MAX_FAILURES, authLimiter } from './auth-limit';
// Series read at scrape time, rendered by prom-client (the worker process's /metrics uses them too).
export { SnapshotRegistry } from './metrics/snapshot';
