/**
 * @module schemas/limits — a job's flow-control fields (create and resource), why its attempts wait, and lanes.
 * Semantics: packages/core/src/flow.ts and the README's "Flow control".
 */
import { z } from '@hono/zod-openapi';
import { LANES, parseJsonPointer, type FlowLimits } from '@jobs/core';
import { Instant, NullableInstant } from './common';

const MAX_LIMIT = 10_000;
const MAX_PERIOD_SECONDS = 86_400;

const Limit = z.number().int().min(1).max(MAX_LIMIT);

const RateLimitInput = z
  .strictObject({
    limit: Limit.openapi({ description: 'At most this many attempts start in any window of period_seconds.' }),
    period_seconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_PERIOD_SECONDS)
      .openapi({ description: 'The window, 1..86400 seconds.' }),
    per_key: z.boolean().default(false).openapi({ description: 'Count per concurrency_key value instead of per job.' }),
  })
  .openapi('RateLimit');

/** The create body's limit fields (spread into JobCreate). */
export const limitInputFields = {
  max_concurrency: Limit.nullish().openapi({
    description: 'At most this many attempts of the job run at once (1..10000).',
  }),
  concurrency_key: z.string().max(200).nullish().openapi({
    example: '/tenant',
    description:
      'JSON Pointer into the payload; attempts with the same value there share max_concurrency_per_key (and rate_limit when per_key).',
  }),
  max_concurrency_per_key: Limit.nullish().openapi({
    description: 'At most this many attempts per concurrency_key value run at once.',
  }),
  rate_limit: RateLimitInput.nullish(),
};

/** The resource's limit fields (spread into Job). */
export const limitOutputFields = {
  max_concurrency: z.number().int().nullable(),
  concurrency_key: z.string().nullable(),
  max_concurrency_per_key: z.number().int().nullable(),
  rate_limit: z.object({ limit: z.number().int(), period_seconds: z.number().int(), per_key: z.boolean() }).nullable(),
};

type LimitBody = { [K in keyof typeof limitInputFields]?: unknown };

/** Checks across the limit fields; reads defensively since the fields may have failed their own checks. */
export function refineLimits(body: LimitBody, ctx: z.RefinementCtx): void {
  const key = body.concurrency_key;
  const perKeyRate =
    typeof body.rate_limit === 'object' &&
    body.rate_limit !== null &&
    (body.rate_limit as { per_key?: unknown }).per_key === true;
  const hasKey = typeof key === 'string';
  if (hasKey) {
    const parsed = parseJsonPointer(key);
    if (!parsed.ok) ctx.addIssue({ code: 'custom', path: ['concurrency_key'], message: parsed.error });
    if ((body.max_concurrency_per_key ?? null) === null && !perKeyRate) {
      ctx.addIssue({
        code: 'custom',
        path: ['concurrency_key'],
        message: 'needs max_concurrency_per_key, or a rate_limit with per_key: true, to limit anything',
      });
    }
  } else {
    if ((body.max_concurrency_per_key ?? null) !== null) {
      ctx.addIssue({
        code: 'custom',
        path: ['max_concurrency_per_key'],
        message: 'needs concurrency_key (a JSON Pointer into the payload, e.g. "/tenant")',
      });
    }
    if (perKeyRate)
      ctx.addIssue({
        code: 'custom',
        path: ['rate_limit', 'per_key'],
        message: 'needs concurrency_key (a JSON Pointer into the payload, e.g. "/tenant")',
      });
  }
}

type LimitInput = {
  max_concurrency?: number | null;
  concurrency_key?: string | null;
  max_concurrency_per_key?: number | null;
  rate_limit?: { limit: number; period_seconds: number; per_key: boolean } | null;
};

export function toLimits(body: LimitInput): FlowLimits {
  return {
    maxConcurrency: body.max_concurrency ?? null,
    concurrencyKey: body.concurrency_key ?? null,
    maxConcurrencyPerKey: body.max_concurrency_per_key ?? null,
    rateLimit: body.rate_limit
      ? {
          limit: body.rate_limit.limit,
          periodMs: body.rate_limit.period_seconds * 1000,
          perKey: body.rate_limit.per_key,
        }
      : null,
  };
}

export function limitsJson(limits: FlowLimits) {
  return {
    max_concurrency: limits.maxConcurrency,
    concurrency_key: limits.concurrencyKey,
    max_concurrency_per_key: limits.maxConcurrencyPerKey,
    rate_limit: limits.rateLimit
      ? {
          limit: limits.rateLimit.limit,
          period_seconds: limits.rateLimit.periodMs / 1000,
          per_key: limits.rateLimit.perKey,
        }
      : null,
  };
}

const Waiting = z
  .object({
    total: z.number().int(),
    max_concurrency: z
      .number()
      .int()
      .openapi({ description: 'Waiting because the job runs max_concurrency attempts.' }),
    max_concurrency_per_key: z
      .number()
      .int()
      .openapi({ description: 'Waiting because their key value runs max_concurrency_per_key attempts.' }),
    rate_limit: z.number().int().openapi({ description: 'Waiting for the rate window to open.' }),
  })
  .openapi('LimitWaiting');

export const JobLimitState = z
  .object({
    job_id: z.string(),
    name: z.string().nullable(),
    running: z.number().int().openapi({ description: 'Attempts holding a slot (running, or claimed and starting).' }),
    waiting: Waiting,
  })
  .openapi('JobLimitState');

export const JobLimits = JobLimitState.extend({
  ...limitOutputFields,
  keys: z
    .array(
      z.object({
        key: z.string().openapi({ description: 'The key value as JSON text ("" for payloads without it).' }),
        running: z.number().int(),
        waiting: z.number().int(),
      }),
    )
    .openapi({ description: 'Key values with attempts waiting, most waiting first (at most 100).' }),
  rate: z.object({ in_window: z.number().int(), next_start_at: NullableInstant }).nullable().openapi({
    description: 'Job-wide rate limit: starts in the current window, and when the next may start if it is full.',
  }),
}).openapi('JobLimits');

export const LaneParams = z.object({
  lane: z.string().openapi({ param: { name: 'lane', in: 'path' }, example: 'short' }),
});

export const Lane = z
  .object({
    lane: z.enum(LANES),
    paused: z.boolean(),
    paused_at: NullableInstant,
    executions: z
      .object({ queued: z.number().int(), retrying: z.number().int(), running: z.number().int() })
      .openapi({ description: 'From PostgreSQL.' }),
    queue: z
      .object({ ready: z.number().int(), delayed: z.number().int(), running: z.number().int(), dead: z.number().int() })
      .openapi({
        description:
          'From Redis: ready (includes attempts about to be checked against limits), delayed, leased, dead-lettered.',
      }),
  })
  .openapi('Lane');

export const LaneList = z.object({ data: z.array(Lane), generated_at: Instant }).openapi('LaneList');
