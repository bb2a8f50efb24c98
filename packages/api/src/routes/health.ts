/** @module routes/health — GET /healthz (no auth): PostgreSQL and the queue each answer within a short timeout, or not. */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { ApiDeps, ApiEnv } from '../deps';
import { json } from '../schemas/common';
import { Health } from '../schemas/system';

/** "ok", or "error: <why>" (short; the endpoint is public, so no stack and no URL). */
async function probe(check: () => Promise<unknown>, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([check(), timeout]);
    return 'ok';
  } catch (error) {
    return `error: ${(error instanceof Error ? error.message : String(error)).slice(0, 200)}`;
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoutes(app: OpenAPIHono<ApiEnv>, deps: ApiDeps): void {
  const timeoutMs = deps.healthTimeoutMs ?? 2000;
  const backend = deps.queueBackend ?? 'redis';
  const pingQueue = async () => {
    if (!(await deps.queue.ping())) throw new Error('unexpected reply to PING');
  };
  app.openapi(
    createRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'getHealth',
      tags: ['system'],
      summary: 'Liveness and dependencies (no authentication)',
      security: [],
      responses: {
        200: json(Health, 'PostgreSQL and the queue answer'),
        503: json(Health, 'One of them does not answer'),
      },
    }),
    async (c) => {
      const [postgres, queue] = await Promise.all([
        probe(() => deps.store.ping(), timeoutMs),
        probe(pingQueue, timeoutMs),
      ]);
      const ok = postgres === 'ok' && queue === 'ok';
      c.header('Cache-Control', 'no-store');
      const body = { status: ok ? ('ok' as const) : ('degraded' as const), postgres, queue, queue_backend: backend };
      return c.json(backend === 'redis' ? { ...body, redis: queue } : body, ok ? 200 : 503);
    },
  );
}
