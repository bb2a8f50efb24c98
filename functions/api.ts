/**
 * The REST API on Lambda (API Gateway v2, payload 2.0): `handle(app)` from hono/aws-lambda. The real app is built
 * on the first request over the container's Lambda context (pool max 1, one Redis client, the EventBridge
 * publisher) and kept for the container's life; a failed build is retried by the next request.
 *
 * Every response waits (at most EVENTS_FLUSH_MS) until the transitions its request emitted (trigger, cancel,
 * replay) were handed to EventBridge: once it returns, the container may be frozen and never thawed again.
 */
import {
  API_PREFIX,
  OUTPUT_PAGE_BYTES,
  applyJobSpecs,
  commandDeps,
  createApp,
  type ApiDeps,
  type OutputFollowOptions,
  type SpecResult,
} from '@jobs/api';
import { createAddressPolicy } from '@jobs/core';
import { liveOutputReader, queueKeys } from '@jobs/queue';
import { postgresLiveOutputReader } from '@jobs/queue-postgres';
import { Hono } from 'hono';
import { handle, type LambdaEvent } from 'hono/aws-lambda';
import type { Context as LambdaContext } from 'aws-lambda';
import { channelSender } from './channel-sender';
import type { Context } from './context';
import { flushTraces, lambdaResources, resetForTests, type LambdaResources } from './lambda';

/** Longest a response waits for EventBridge to take its events; what is left stays buffered for the next one. */
export const EVENTS_FLUSH_MS = 2_000;

/**
 * Follow streams on Lambda. API Gateway (HTTP API) buffers a Lambda's whole response, and a follow held open would
 * keep one of the API's few reserved slots for the function's whole timeout: each response sends what there is now
 * (at most OUTPUT_PAGE_BYTES of events) and ends with a `retry:` hint; EventSource reconnects with Last-Event-ID and
 * gets what followed, so an open dashboard tab costs a short request every two seconds instead of a slot.
 */
export const LAMBDA_OUTPUT_FOLLOW: OutputFollowOptions = { windowMs: 0, retryMs: 2000, maxBytes: OUTPUT_PAGE_BYTES };

/** The API's dependencies from a process context; shared with the local stack (functions/local.ts). */
export function apiDeps(ctx: Context): ApiDeps {
  return {
    store: ctx.store,
    queue: ctx.queue,
    queueBackend: ctx.config.queueBackend,
    clock: ctx.clock,
    sink: ctx.sink,
    logger: ctx.logger,
    apiKeys: ctx.config.apiKeys,
    metricsToken: ctx.config.metricsToken ?? undefined,
    metricsJobs: ctx.config.metricsJobs,
    authFailureLimit: ctx.config.authFailureLimit,
    tracing: ctx.tracing,
    allowedHosts: ctx.config.allowedHosts,
    commandJobs: ctx.config.commandJobs,
    targetPolicy: createAddressPolicy(ctx.config.httpTargetAllow),
    channelSender: channelSender(ctx.config),
    bodyLimitBytes: ctx.config.bodyLimitBytes,
    shortLaneMaxTimeoutMs: ctx.config.shortLaneMaxTimeoutMs,
    // Workers heartbeat every LEASE_TIMEOUT / 3: "active" allows six missed beats before a worker drops off the list.
    workerActiveWithinMs: 2 * ctx.config.leaseMs,
    // Live output is kept beside the queue: Redis streams, or the live_output table on the PostgreSQL queue.
    liveOutput: ctx.redis
      ? liveOutputReader(ctx.redis, queueKeys(ctx.config.queuePrefix))
      : postgresLiveOutputReader(ctx.pool),
  };
}

type App = ReturnType<typeof createApp>;

/** The API's dependencies on Lambda: follow streams end at once (LAMBDA_OUTPUT_FOLLOW). */
const lambdaDeps = (ctx: Context): ApiDeps => ({ ...apiDeps(ctx), outputFollow: LAMBDA_OUTPUT_FOLLOW });

/**
 * Per container: the REST API alone, and the app with the dashboard, built when a request first needs it. The
 * dashboard (its pages and their components) is imported only then, from a chunk of its own, so a container that
 * serves only /api/v1 never loads it. Once built, the full app serves every path.
 */
const apps = new WeakMap<LambdaResources, { api?: App; full?: Promise<App> }>();

const isApiPath = (path: string) => path === API_PREFIX || path.startsWith(`${API_PREFIX}/`);

async function build(path: string = API_PREFIX) {
  const ctx = await lambdaResources();
  let built = apps.get(ctx);
  if (!built) apps.set(ctx, (built = {}));
  if (built.full || !isApiPath(path)) {
    built.full ??= import('@jobs/dashboard').then(({ dashboardRoutes }) =>
      createApp(lambdaDeps(ctx), [dashboardRoutes]),
    );
    built.full.catch(() => (built.full = undefined));
    return { ctx, app: await built.full };
  }
  built.api ??= createApp(lambdaDeps(ctx));
  return { ctx, app: built.api };
}

/** Closes the pool and Redis client of the built app, if any (tests; a Lambda container just freezes). */
export async function closeApi(): Promise<void> {
  await resetForTests();
}

/** Forwards every request to the lazily built app, keeping the Lambda event and context in `env`. */
const app = new Hono();
app.all('*', async (c) => {
  const { ctx, app: api } = await build(c.req.path);
  const response = await api.fetch(c.req.raw, c.env);
  if (ctx.events && !(await ctx.events.flush(EVENTS_FLUSH_MS))) {
    ctx.logger.warn({
      event: 'api.events_not_flushed',
      within_ms: EVENTS_FLUSH_MS,
      reason: 'EventBridge did not take every event in time; the rest stay buffered',
    });
  }
  await flushTraces(ctx);
  return response;
});

const http = handle(app);

/** The deploy's invocation (infra/jobs.ts): the SST app's jobs.json, applied after the migrations. */
export interface DeployJobsEvent {
  source: 'deploy';
  jobs: unknown[];
}

/** Marks the jobs the deploy creates: only those are pruned when jobs.json no longer names them. */
export const DEPLOY_OWNER = 'sst-deploy';

const isDeployEvent = (event: unknown): event is DeployJobsEvent =>
  typeof event === 'object' &&
  event !== null &&
  (event as { source?: unknown }).source === 'deploy' &&
  Array.isArray((event as { jobs?: unknown }).jobs);

/**
 * Applies the deploy's job specs (create or replace by name, prune the deploy's own jobs it no longer lists). Throws
 * when any spec fails, naming each, so the deploy fails. Only a direct invocation (IAM: whoever deploys) carries
 * such an event: API Gateway sends HTTP events only.
 */
export async function applyOnDeploy(event: DeployJobsEvent): Promise<{ results: SpecResult[] }> {
  const { ctx } = await build();
  const deps = apiDeps(ctx);
  // The deploy's changes are audited like a key's, under the name "deploy".
  const commands = { ...commandDeps(deps), actor: { keyName: 'deploy', requestId: null, source: null } };
  const results = await applyJobSpecs(deps, commands, {
    specs: event.jobs,
    owner: DEPLOY_OWNER,
    actor: 'deploy',
    prune: true,
  });
  await ctx.events?.flush(EVENTS_FLUSH_MS);
  ctx.logger.info({ event: 'api.jobs_applied', results });
  const failed = results.filter((r) => r.action === 'failed');
  if (failed.length > 0) throw new Error(`jobs.json: ${failed.map((f) => `${f.name}: ${f.error}`).join('; ')}`);
  return { results };
}

export function handler(event: DeployJobsEvent, context?: LambdaContext): Promise<{ results: SpecResult[] }>;
export function handler(event: LambdaEvent, context?: LambdaContext): ReturnType<typeof http>;
export function handler(event: LambdaEvent | DeployJobsEvent, context?: LambdaContext) {
  return isDeployEvent(event) ? applyOnDeploy(event) : http(event, context);
}
