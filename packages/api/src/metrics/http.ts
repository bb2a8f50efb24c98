/**
 * @module metrics/http — the API process's own series: `http_request_duration_seconds{method,route,status}` (the
 * route pattern, such as `/api/v1/jobs/:id`, never the raw path, so ids cannot blow up the series count) and
 * prom-client's default process metrics (CPU, memory, event-loop lag, handles).
 */
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export interface ProcessMetrics {
  registry: Registry;
  /** Times every request; put first so that it sees the final status. */
  middleware: MiddlewareHandler;
}

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25];
/** Route of a request no route matched (404s): one series for all of them. */
const UNMATCHED = 'unmatched';

/** @example const m = createProcessMetrics(); app.use('*', m.middleware); await m.registry.metrics() */
export function createProcessMetrics(): ProcessMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'API requests by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: BUCKETS,
    registers: [registry],
  });
  const middleware: MiddlewareHandler = async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      // The last route matched is the handler's; a request that only met the '*' middleware matched none.
      const route = routePath(c, -1);
      duration.observe(
        {
          method: c.req.method,
          route: route === '*' || route === '/*' ? UNMATCHED : route,
          status: String(c.res.status),
        },
        (performance.now() - started) / 1000,
      );
    }
  };
  return { registry, middleware };
}
