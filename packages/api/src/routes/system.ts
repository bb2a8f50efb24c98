/** @module routes/system — active workers, stats and the schedule preview (all under /api/v1). */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { nextFireTimes, parseCron } from '@jobs/core';
import { needs } from '../auth';
import type { ApiDeps, ApiEnv } from '../deps';
import { validationFailed } from '../errors';
import { errorResponses, json } from '../schemas/common';
import { Preview, PreviewQuery, Stats, WorkerList } from '../schemas/system';
import { statsJson, workerJson } from '../serializers';
import { limitStateJson } from './flow';

export function systemRoutes(app: OpenAPIHono<ApiEnv>, deps: ApiDeps): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/workers',
      operationId: 'listWorkers',
      middleware: [needs('read')] as const,
      tags: ['system'],
      summary: 'Workers that heartbeated recently',
      responses: { 200: json(WorkerList, 'Active workers, newest first'), ...errorResponses },
    }),
    async (c) => {
      const workers = await deps.store.workerListActive(deps.workerActiveWithinMs);
      return c.json({ data: workers.map(workerJson) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/stats',
      operationId: 'getStats',
      middleware: [needs('read')] as const,
      tags: ['system'],
      summary: 'Counts by status, queue depth per lane, throughput, success rate, durations, oldest queued age',
      responses: { 200: json(Stats, 'Current statistics'), ...errorResponses },
    }),
    async (c) => {
      const [stats, depth, flow] = await Promise.all([
        deps.store.executionStats(),
        deps.queue.depth(),
        deps.queue.flowInspect(),
      ]);
      const names = await deps.store.jobNames(flow.map((f) => f.jobId));
      const limits = flow
        .map((f) => limitStateJson(f, names.get(f.jobId) ?? null))
        .sort((a, b) => b.waiting.total - a.waiting.total);
      return c.json({ ...statsJson(stats, depth, deps.clock.now()), limits }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/schedules/preview',
      operationId: 'previewSchedule',
      middleware: [needs('read')] as const,
      tags: ['system'],
      summary: 'The next fire times of a cron expression, computed by the scheduler itself',
      request: { query: PreviewQuery },
      responses: { 200: json(Preview, 'Fire times strictly after `from`'), ...errorResponses },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const parsed = parseCron(q.cron_expr, q.timezone);
      // The query schema already parsed it; this only narrows the type.
      if (!parsed.ok) throw validationFailed([{ path: 'cron_expr', message: parsed.error }]);
      const from = q.from ? new Date(q.from) : deps.clock.now();
      const times = nextFireTimes(parsed.schedule, from, q.count);
      return c.json({ fire_times: times.map((t) => t.toISOString()) }, 200);
    },
  );
}
