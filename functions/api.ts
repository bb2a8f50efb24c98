/**
 * The REST API on Lambda (API Gateway v2, payload 2.0): `handle(app)` from hono/aws-lambda. The real app and its
 * context (pool max 1, one Redis client) are built on the first request and kept for the container's life; a failed
 * build is retried by the next request instead of poisoning the container.
 */
import { createApp, type ApiDeps } from '@jobs/api';
import { dashboardRoutes } from '@jobs/dashboard';
import { Hono } from 'hono';
import { handle } from 'hono/aws-lambda';
import { createContext, type Context } from './context';

/** The API's dependencies from a process context; shared with the local stack (functions/local.ts). */
export function apiDeps(ctx: Context): ApiDeps {
  return {
    store: ctx.store,
    queue: ctx.queue,
    clock: ctx.clock,
    sink: ctx.sink,
    logger: ctx.logger,
    apiKeys: ctx.config.apiKeys,
    bodyLimitBytes: ctx.config.bodyLimitBytes,
    shortLaneMaxTimeoutMs: ctx.config.shortLaneMaxTimeoutMs,
    // Workers heartbeat every LEASE_TIMEOUT / 3: "active" allows six missed beats before a worker drops off the list.
    workerActiveWithinMs: 2 * ctx.config.leaseMs,
  };
}

let built: Promise<{ ctx: Context; app: ReturnType<typeof createApp> }> | null = null;

function build() {
  built ??= (async () => {
    // Skip the start-up check: the first query tells soon enough, and a Lambda pays for every round trip.
    const ctx = await createContext({ poolMax: 1, check: false });
    return { ctx, app: createApp(apiDeps(ctx), [dashboardRoutes]) };
  })().catch((error) => {
    built = null;
    throw error;
  });
  return built;
}

/** Closes the pool and Redis client of the built app, if any (tests; a Lambda container just freezes). */
export async function closeApi(): Promise<void> {
  const current = built;
  built = null;
  if (current) await (await current.catch(() => null))?.ctx.close();
}

/** Forwards every request to the lazily built app, keeping the Lambda event and context in `env`. */
const app = new Hono();
app.all('*', async (c) => (await build()).app.fetch(c.req.raw, c.env));

export const handler = handle(app);
