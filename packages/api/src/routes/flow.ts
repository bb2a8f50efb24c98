/** @module routes/flow — lanes (list, pause, resume) and why a job's attempts wait for a slot. */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { LANES, NotFoundError, setLanePaused, type FlowJobState, type Lane as LaneName } from '@jobs/core';
import { needs } from '../auth';
import type { ApiDeps, ApiEnv } from '../deps';
import { IdParams, errorResponses, json, notFoundResponse } from '../schemas/common';
import { JobLimits, Lane, LaneList, LaneParams, limitsJson } from '../schemas/limits';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A job's flow state on the wire. */
export function limitStateJson(state: FlowJobState, name: string | null) {
  const w = state.waiting;
  return {
    job_id: state.jobId,
    name,
    running: state.running,
    waiting: {
      total: w.maxConcurrency + w.maxConcurrencyPerKey + w.rateLimit,
      max_concurrency: w.maxConcurrency,
      max_concurrency_per_key: w.maxConcurrencyPerKey,
      rate_limit: w.rateLimit,
    },
  };
}

function laneName(lane: string): LaneName {
  if (!(LANES as readonly string[]).includes(lane)) throw new NotFoundError('lane', lane);
  return lane as LaneName;
}

async function lanesJson(deps: ApiDeps) {
  const [lanes, stats, depth] = await Promise.all([
    deps.store.laneList(),
    deps.store.executionStats(),
    deps.queue.depth(),
  ]);
  return lanes
    .filter((l) => (LANES as readonly string[]).includes(l.lane))
    .map((l) => ({
      lane: l.lane,
      paused: l.paused,
      paused_at: iso(l.pausedAt),
      executions: stats.byLane[l.lane],
      queue: depth[l.lane],
    }));
}

export function flowRoutes(app: OpenAPIHono<ApiEnv>, deps: ApiDeps): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/lanes',
      operationId: 'listLanes',
      middleware: [needs('read')] as const,
      tags: ['lanes'],
      summary: 'Lanes: paused or not, and their depths',
      responses: { 200: json(LaneList, 'Every lane'), ...errorResponses },
    }),
    async (c) => c.json({ data: await lanesJson(deps), generated_at: deps.clock.now().toISOString() }, 200),
  );

  for (const [action, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    app.openapi(
      createRoute({
        method: 'post',
        path: `/lanes/{lane}/${action}`,
        operationId: paused ? 'pauseLane' : 'resumeLane',
        middleware: [needs('operate', paused ? 'lane.pause' : 'lane.resume')] as const,
        tags: ['lanes'],
        summary: paused
          ? 'Pause a lane: nothing new starts on it; triggers are still accepted and running attempts finish'
          : 'Resume a lane: its waiting attempts start again',
        request: { params: LaneParams },
        responses: { 200: json(Lane, 'The lane'), ...errorResponses, 404: notFoundResponse },
      }),
      async (c) => {
        const lane = laneName(c.req.valid('param').lane);
        await setLanePaused(c.var.commands, lane, paused);
        return c.json(
          (await lanesJson(deps)).find((l) => l.lane === lane)!,
          200,
        );
      },
    );
  }

  app.openapi(
    createRoute({
      method: 'get',
      path: '/jobs/{id}/limits',
      operationId: 'getJobLimits',
      middleware: [needs('read')] as const,
      tags: ['jobs'],
      summary: "A job's limits, the attempts holding a slot, and how many wait and why",
      request: { params: IdParams },
      responses: { 200: json(JobLimits, 'The job’s flow state'), ...errorResponses, 404: notFoundResponse },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const job = await deps.store.jobGet(id);
      if (!job) throw new NotFoundError('job', id);
      const [state] = await deps.queue.flowInspect([id]);
      const s = state!;
      return c.json(
        {
          ...limitStateJson(s, job.name),
          ...limitsJson(job.limits),
          keys: s.keys,
          rate: s.rate ? { in_window: s.rate.inWindow, next_start_at: iso(s.rate.nextStartAt) } : null,
        },
        200,
      );
    },
  );
}
