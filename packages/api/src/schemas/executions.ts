/** @module schemas/executions — the execution resource, list filters and the trigger body. */
import { z } from '@hono/zod-openapi';
import { DELIVERY_ENDS, EXECUTION_STATUSES, LANES, TRIGGERS } from '@jobs/core';
import { IdFilter, Instant, NullableInstant } from './common';
import { checkPayload } from './jobs';

const Delivery = z
  .object({
    worker_id: z.string().nullable().openapi({ description: 'The worker it was delivered to; null for a lost one.' }),
    started_at: NullableInstant.openapi({ description: 'When it started; null for a lost one (no start recorded).' }),
    ended_at: NullableInstant.openapi({ description: 'When it ended; null while it runs.' }),
    outcome: z.enum([...DELIVERY_ENDS, ...EXECUTION_STATUSES]).openapi({
      description:
        "How it ended: `released` (given back at a worker's shutdown), `lost` (its claim expired before a start was recorded: the worker died or could not reach the database); for the last delivery, the execution's status.",
    }),
  })
  .openapi('Delivery');

export const Execution = z
  .object({
    id: z.string().openapi({ example: '1001' }),
    job_id: z.string(),
    status: z.enum(EXECUTION_STATUSES),
    trigger: z.enum(TRIGGERS),
    attempt: z.number().int().openapi({ description: '1 for the first attempt of a chain; retries count up.' }),
    root_id: z.string().openapi({ description: 'First attempt of this chain (its own id for a first attempt).' }),
    retry_of: z.string().nullable().openapi({ description: 'The attempt this one retries or replays.' }),
    lane: z.enum(LANES),
    priority: z.number().int(),
    payload: z.unknown(),
    worker_id: z.string().nullable(),
    scheduled_for: Instant,
    queued_at: Instant,
    started_at: NullableInstant,
    finished_at: NullableInstant,
    lease_expires_at: NullableInstant,
    duration_ms: z.number().int().nullable(),
    exit_code: z.number().int().nullable(),
    output: z.string().nullable().openapi({
      description:
        "Captured output (capped). A command's stdout and stderr interleaved by line, each stderr line starting with `[stderr] ` (a stdout line that starts with `[stderr] ` or `[stdout] ` gets `[stdout] ` before it).",
    }),
    error: z.string().nullable(),
    replayed_by: z
      .string()
      .nullable()
      .openapi({ description: 'The execution a replay of this one created; null: never replayed.' }),
    job_version: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The version of its job's definition it started with; null until it starts." }),
    delivery_count: z.number().int().openapi({
      description:
        'How many times a worker was given this attempt: 0 until it starts, 1 normally, more when it was redelivered (a command sees the current one as JOB_DELIVERY).',
    }),
    deliveries: z.array(Delivery).openapi({
      description: 'Each delivery of this attempt, oldest first (the last is the current one).',
    }),
  })
  .openapi('Execution');

export type ExecutionJson = z.infer<typeof Execution>;

/** A list row: the execution without its payload and output (up to 64 KiB each), which GET /executions/{id} has. */
export const ExecutionSummary = Execution.omit({
  payload: true,
  output: true,
  delivery_count: true,
  deliveries: true,
}).openapi('ExecutionSummary', {
  description:
    'An execution as lists return it: no payload and no output (GET /executions/{id} has both); an error longer than 2,048 characters is cut and marked.',
});

export type ExecutionSummaryJson = z.infer<typeof ExecutionSummary>;

export const ExecutionListQuery = z.object({
  status: z
    .enum(EXECUTION_STATUSES)
    .optional()
    .openapi({ param: { name: 'status', in: 'query' } }),
  job_id: IdFilter.optional().openapi({ param: { name: 'job_id', in: 'query' } }),
});

export const ExecutionStatusQuery = z.object({
  status: z
    .enum(EXECUTION_STATUSES)
    .optional()
    .openapi({ param: { name: 'status', in: 'query' } }),
});

export const TriggerBody = z
  .strictObject({
    payload: z.unknown().optional().openapi({ description: 'Any JSON (at most 64 KiB); default: none.' }),
  })
  .superRefine((body, ctx) => checkPayload(ctx, body.payload))
  .openapi('TriggerBody');

export const ReplayBody = z
  .strictObject({
    force: z
      .boolean()
      .default(false)
      .openapi({ description: 'Replay again although this execution was replayed before.' }),
  })
  .openapi('ReplayBody');

export const IdempotencyHeaders = z.object({
  'Idempotency-Key': z
    .string()
    .min(1)
    .max(200)
    .optional()
    .openapi({
      param: { name: 'Idempotency-Key', in: 'header' },
      description: 'A retried call with the same key returns the same execution (200 instead of 201).',
    }),
});
