/**
 * @module app — createApp(deps): the REST API as a Hono app. Routes live in routes/, shapes in schemas/; this module
 * only orders the middleware (request log, 405, auth, body limit) and renders the OpenAPI document.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import { clip, type CommandDeps } from '@jobs/core';
import { methodNotAllowed } from 'hono/method-not-allowed';
import { apiAuth, needs } from './auth';
import { AUTH_MAX_FAILURES, AUTH_TRACKED_SOURCES, AUTH_WINDOW_MS, authLimiter } from './auth-limit';
import { bodyLimit } from './body-limit';
import { hostGuard } from './host-guard';
import type { ApiDeps, ApiEnv } from './deps';
import { ApiError, errorBody, onError, validationHook } from './errors';
import { createProcessMetrics } from './metrics/http';
import { queryText } from './query-text';
import { requestLog } from './request-log';
import { requestSpans } from './tracing';
import { utf8Body } from './utf8-body';
import { auditRoutes } from './routes/audit';
import { channelRoutes } from './routes/channels';
import { executionRoutes } from './routes/executions';
import { outputRoutes } from './routes/output';
import { flowRoutes } from './routes/flow';
import { healthRoutes } from './routes/health';
import { jobEditRoutes } from './routes/job-edits';
import { metricsRoutes } from './routes/metrics';
import { jobRoutes } from './routes/jobs';
import { systemRoutes } from './routes/system';

/** Routes added to the root app beside /api/v1, such as the dashboard (@jobs/dashboard), which depends on this package. */
export type AppMount = (root: OpenAPIHono<ApiEnv>, deps: ApiDeps, commands: CommandDeps) => void;

export const API_PREFIX = '/api/v1';
const API_VERSION = '1.0.0';

/**
 * @example
 *   const app = createApp({ store, queue, clock: systemClock, sink, logger, apiKeys: ['secret'],
 *     bodyLimitBytes: 262144, shortLaneMaxTimeoutMs: 600_000, workerActiveWithinMs: 60_000 });
 *   const res = await app.request('/api/v1/jobs', { headers: { Authorization: 'Bearer secret' } });
 *   const withDashboard = createApp(deps, [dashboardRoutes]);
 */
export function createApp(deps: ApiDeps, mounts: readonly AppMount[] = []) {
  const root = new OpenAPIHono<ApiEnv>({ defaultHook: validationHook });
  const v1 = new OpenAPIHono<ApiEnv>({ defaultHook: validationHook });
  const commands = commandDeps(deps);

  const metrics = createProcessMetrics();
  root.use('*', metrics.middleware);
  root.use('*', requestLog(deps.logger));
  if (deps.tracing) root.use('*', requestSpans(deps.tracing));
  root.use('*', hostGuard({ keyed: deps.apiKeys.length > 0, allowedHosts: deps.allowedHosts ?? [] }));
  root.use(
    '*',
    methodNotAllowed({
      app: root,
      onMethodNotAllowed: (c, methods) =>
        c.json(errorBody('method_not_allowed', `${c.req.method} is not allowed here; use ${methods.join(', ')}`), 405, {
          Allow: methods.join(', '),
        }),
    }),
  );
  // Before any route, API or dashboard, reads a parameter: each must be text the database can hold.
  root.use('*', queryText());

  // One budget of wrong keys per source address for every route that takes a key (/api/v1 and /metrics).
  const limiter = authLimiter({
    max: deps.authFailureLimit ?? AUTH_MAX_FAILURES,
    windowMs: AUTH_WINDOW_MS,
    capacity: AUTH_TRACKED_SOURCES,
    now: () => deps.clock.now().getTime(),
  });
  v1.use('*', apiAuth(deps, commands, [], limiter));
  v1.use(
    '*',
    bodyLimit(deps.bodyLimitBytes, () => {
      throw new ApiError(413, 'payload_too_large', `request body exceeds ${deps.bodyLimitBytes} bytes`);
    }),
  );
  v1.use('*', utf8Body());
  jobRoutes(v1, deps);
  jobEditRoutes(v1, deps);
  executionRoutes(v1, deps);
  outputRoutes(v1, deps);
  systemRoutes(v1, deps);
  flowRoutes(v1, deps);
  auditRoutes(v1, deps);
  channelRoutes(v1, deps);

  let document: unknown = null;
  v1.get('/openapi.json', needs('read'), (c) => {
    document ??= root.getOpenAPI31Document({
      openapi: '3.1.0',
      info: {
        title: 'Jobs scheduler API',
        version: API_VERSION,
        description: 'A durable job scheduler: jobs (cron, one-off or manual), their executions, workers and stats.',
      },
      // Relative: the document describes the deployment that serves it (locally, on Lambda, behind any domain).
      servers: [{ url: '/', description: 'The deployment serving this document' }],
      security: [{ bearerAuth: [] }],
      tags: [
        { name: 'jobs', description: 'Job definitions: create, change, version history, trigger, pause, backfill.' },
        { name: 'executions', description: 'Attempts: their state, output, cancellation and replay.' },
        { name: 'lanes', description: 'The short and long lanes: pause, resume, depths.' },
        { name: 'system', description: 'Workers, stats, schedule preview and health.' },
        { name: 'audit', description: 'Who changed what: the audit trail (admin keys).' },
        { name: 'channels', description: 'Where alert messages go: webhooks, Slack, email, SNS (secrets write-only).' },
      ],
    });
    return c.json(document as object, 200);
  });

  root.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description:
      "One of the keys in API_KEYS. Required on every /api/v1 route when API_KEYS is set; the key's role (read, operate, admin) decides what it may do (403 `forbidden` otherwise).",
  });
  healthRoutes(root, deps);
  metricsRoutes(root, deps, metrics, commands, limiter);
  root.route(API_PREFIX, v1);
  for (const mount of mounts) mount(root, deps, commands);

  root.notFound((c) => c.json(errorBody('not_found', `no route for ${c.req.method} ${clip(c.req.path)}`), 404));
  root.onError(onError(deps.logger));
  return root;
}

/** The core's command dependencies from the API's. */
export function commandDeps(deps: ApiDeps): CommandDeps {
  return {
    store: deps.store,
    queue: deps.queue,
    clock: deps.clock,
    sink: deps.sink,
    logger: deps.logger,
    commandJobs: deps.commandJobs ?? true,
  };
}
