/** @module schemas/system — workers, stats, schedule preview and health. */
import { z } from '@hono/zod-openapi';
import { EXECUTION_STATUSES, LANES } from '@jobs/core';
import { InputInstant, Instant, checkSchedule } from './common';
import { JobLimitState } from './limits';

const Worker = z
  .object({
    id: z.string(),
    kind: z.enum(['lambda', 'container', 'local']),
    host: z.string(),
    lanes: z.array(z.enum(LANES)),
    started_at: Instant,
    last_heartbeat_at: Instant,
    concurrency: z.number().int(),
    in_flight: z.number().int(),
    version: z.string(),
  })
  .openapi('Worker');

export const WorkerList = z.object({ data: z.array(Worker) }).openapi('WorkerList');

const laneRecord = <T extends z.ZodType>(value: T) => z.object({ short: value, long: value });

export const Stats = z
  .object({
    counts: z.record(z.enum(EXECUTION_STATUSES), z.number().int()).openapi({
      description: 'Live statuses (queued, retrying, running) are exact; final ones count the last 24 hours.',
    }),
    lanes: laneRecord(
      z.object({ queued: z.number().int(), retrying: z.number().int(), running: z.number().int() }),
    ).openapi({
      description: 'Live executions per lane, from PostgreSQL.',
    }),
    queue: laneRecord(
      z.object({
        ready: z.number().int(),
        delayed: z.number().int(),
        running: z.number().int(),
        dead: z.number().int(),
      }),
    ).openapi({ description: 'Queue depth per lane, from Redis: ready, delayed (due later), leased, dead-lettered.' }),
    throughput: z
      .object({ last_minute: z.number().int(), last_hour: z.number().int() })
      .openapi({ description: 'Finished attempts.' }),
    success_rate: z.object({ last_hour: z.number().nullable() }),
    duration_ms: z.object({ p50: z.number().nullable(), p95: z.number().nullable(), sample: z.number().int() }),
    oldest_queued_age_ms: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'Age of the oldest due execution still queued.' }),
    limits: z.array(JobLimitState).openapi({
      description: 'Jobs with attempts waiting for a slot (at most 200, most waiting first): how many wait, and why.',
    }),
    generated_at: Instant,
  })
  .openapi('Stats');

export const PreviewQuery = z
  .object({
    cron_expr: z
      .string()
      .min(1)
      .max(1000)
      .openapi({ param: { name: 'cron_expr', in: 'query' }, example: '30 2 * * *' }),
    timezone: z
      .string()
      .default('UTC')
      .openapi({ param: { name: 'timezone', in: 'query' }, example: 'America/New_York' }),
    from: InputInstant.optional().openapi({
      param: { name: 'from', in: 'query' },
      description:
        'Fire times strictly after this instant (default now); from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z.',
    }),
    count: z.coerce
      .number()
      .int()
      .min(1)
      .max(100)
      .default(10)
      .openapi({ param: { name: 'count', in: 'query' } }),
  })
  .superRefine(
    (q, ctx) => {
      const timezone = q.timezone ?? 'UTC';
      if (typeof q.cron_expr === 'string' && typeof timezone === 'string') checkSchedule(ctx, q.cron_expr, timezone);
    },
    { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
  );

export const Preview = z.object({ fire_times: z.array(Instant) }).openapi('SchedulePreview');

export const Health = z
  .object({
    status: z.enum(['ok', 'degraded']),
    postgres: z.string().openapi({ example: 'ok' }),
    queue: z.string().openapi({
      example: 'error: no answer within 2000 ms',
      description: 'The queue (Redis, or the PostgreSQL queue tables)',
    }),
    queue_backend: z.enum(['redis', 'postgres']),
    redis: z
      .string()
      .optional()
      .openapi({ description: 'Same as queue, on the Redis queue only (kept for probes that read it)' }),
  })
  .openapi('Health');
