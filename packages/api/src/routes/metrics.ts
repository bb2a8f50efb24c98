/**
 * @module routes/metrics — GET /metrics (Prometheus text format): the API process's own series, then the
 * system-wide ones read at scrape time (metrics/series.ts). Needs an API key, or METRICS_TOKEN as a bearer token.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { bearerAuth } from '../auth';
import type { ApiDeps, ApiEnv } from '../deps';
import type { ProcessMetrics } from '../metrics/http';
import { systemSeries } from '../metrics/series';

export function metricsRoutes(app: OpenAPIHono<ApiEnv>, deps: ApiDeps, own: ProcessMetrics): void {
  const keys = [...deps.apiKeys, ...(deps.metricsToken ? [deps.metricsToken] : [])];
  app.get('/metrics', bearerAuth(keys), async (c) => {
    const [snapshot, depth, workers] = await Promise.all([
      deps.store.metricsSnapshot(),
      deps.queue.depth(),
      deps.store.workerListActive(deps.workerActiveWithinMs),
    ]);
    const system = await systemSeries({ snapshot, depth, workers }).metrics();
    const body = `${await own.registry.metrics()}\n${system}`;
    return c.body(body, 200, { 'Content-Type': own.registry.contentType, 'Cache-Control': 'no-store' });
  });
}
