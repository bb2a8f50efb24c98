/**
 * The REST API on Lambda (API Gateway v2, payload 2.0): `handle(app)` from hono/aws-lambda. The real app is built
 * on the first request over the container's Lambda context (pool max 1, one Redis client, the EventBridge
 * publisher) and kept for the container's life; a failed build is retried by the next request.
 *
 * Every response waits (at most EVENTS_FLUSH_MS) until the transitions its request emitted (trigger, cancel,
 * replay) were handed to EventBridge: once it returns, the container may be frozen and never thawed again.
 */
import { createApp, type ApiDeps } from '@jobs/api';
import { dashboardRoutes } from '@jobs/dashboard';
import { Hono } from 'hono';
import { handle } from 'hono/aws-lambda';
import type { Context } from './context';
import { lambdaResources, resetForTests, type LambdaResources } from './lambda';

/** Longest a response waits for EventBridge to take its events; what is left stays buffered for the next one. */
export const EVENTS_FLUSH_MS = 2_000;

/** The API's dependencies from a process context; shared with the local stack (functions/local.ts). */
export function apiDeps(ctx: Context): ApiDeps {
  return {
    store: ctx.store,
    queue: ctx.queue,
    clock: ctx.clock,
    sink: ctx.sink,
    logger: ctx.logger,
    apiKeys: ctx.config.apiKeys,
    metricsToken: ctx.config.metricsToken ?? undefined,
    allowedHosts: ctx.config.allowedHosts,
    commandJobs: ctx.config.commandJobs,
    bodyLimitBytes: ctx.config.bodyLimitBytes,
    shortLaneMaxTimeoutMs: ctx.config.shortLaneMaxTimeoutMs,
    // Workers heartbeat every LEASE_TIMEOUT / 3: "active" allows six missed beats before a worker drops off the list.
    workerActiveWithinMs: 2 * ctx.config.leaseMs,
  };
}

const apps = new WeakMap<LambdaResources, ReturnType<typeof createApp>>();

async function build() {
  const ctx = await lambdaResources();
  let app = apps.get(ctx);
  if (!app) apps.set(ctx, (app = createApp(apiDeps(ctx), [dashboardRoutes])));
  return { ctx, app };
}

/** Closes the pool and Redis client of the built app, if any (tests; a Lambda container just freezes). */
export async function closeApi(): Promise<void> {
  await resetForTests();
}

/** Forwards every request to the lazily built app, keeping the Lambda event and context in `env`. */
const app = new Hono();
app.all('*', async (c) => {
  const { ctx, app: api } = await build();
  const response = await api.fetch(c.req.raw, c.env);
  if (ctx.events && !(await ctx.events.flush(EVENTS_FLUSH_MS))) {
    ctx.logger.warn({ event: 'api.events_not_flushed', within_ms: EVENTS_FLUSH_MS, reason: 'EventBridge did not take every event in time; the rest stay buffered' });
  }
  return response;
});

export const handler = handle(app);
