/**
 * @module routes/metrics — GET /metrics (Prometheus text format): the API process's own series, then the
 * system-wide ones read at scrape time (metrics/series.ts), and the per-job ones METRICS_JOBS asks for
 * (metrics/job-series.ts). Needs an API key, or METRICS_TOKEN as a bearer token.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { CommandDeps } from '@jobs/core';
import { apiAuth, needs } from '../auth';
import type { AuthLimiter } from '../auth-limit';
import type { ApiDeps, ApiEnv } from '../deps';
import type { ProcessMetrics } from '../metrics/http';
import { addJobSeries } from '../metrics/job-series';
import { systemSeries } from '../metrics/series';

export function metricsRoutes(
  app: OpenAPIHono<ApiEnv>,
  deps: ApiDeps,
  own: ProcessMetrics,
  commands: CommandDeps,
  limiter: AuthLimiter | null = null,
): void {
  // The token acts as a read key named metrics-token (it can read nothing else: it is not in API_KEYS).
  const token = deps.metricsToken ? [{ name: 'metrics-token', role: 'read' as const, key: deps.metricsToken }] : [];
  app.get('/metrics', needs('read'), apiAuth(deps, commands, token, limiter), async (c) => {
    const [snapshot, depth, workers, jobs] = await Promise.all([
      deps.store.metricsSnapshot(),
      deps.queue.depth(),
      deps.store.workerListActive(deps.workerActiveWithinMs),
      deps.metricsJobs ? deps.store.jobHealth(deps.metricsJobs) : null,
    ]);
    const series = systemSeries({ snapshot, depth, workers });
    if (jobs) addJobSeries(series, jobs);
    const system = await series.metrics();
    const body = `${await own.registry.metrics()}\n${system}`;
    return c.body(body, 200, { 'Content-Type': own.registry.contentType, 'Cache-Control': 'no-store' });
  });
}
