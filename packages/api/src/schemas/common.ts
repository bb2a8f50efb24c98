/** @module schemas/common — shapes shared by every resource: errors, ids, timestamps, pages, schedule checks. */
import { z } from '@hono/zod-openapi';
import { instantRangeProblem, isValidTimeZone, parseCron, type CronSchedule } from '@jobs/core';

const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'validation_failed' }),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    }),
  })
  .openapi('Error');

const ID_PATTERN = /^[1-9][0-9]{0,17}$/;

/** Path id: any string, so a malformed id reaches the store and becomes a 404, never a 400 or 500. */
export const IdParams = z.object({
  id: z.string().openapi({ param: { name: 'id', in: 'path' }, example: '42' }),
});

/** A timestamp in responses: ISO 8601 in UTC, or null. */
export const Instant = z.iso.datetime().openapi({ example: '2025-01-01T12:00:00.000Z' });
export const NullableInstant = Instant.nullable();

/** An instant the API takes: ISO 8601 with an offset, from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z. */
export const InputInstant = z.iso.datetime({ offset: true }).superRefine((text, ctx) => {
  const problem = instantRangeProblem(new Date(text));
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export const PageQuery = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(200)
    .default(50)
    .openapi({ param: { name: 'limit', in: 'query' }, description: 'Page size, 1..200 (default 50).' }),
  cursor: z
    .string()
    .regex(ID_PATTERN, 'must be the next_cursor of an earlier page')
    .optional()
    .openapi({ param: { name: 'cursor', in: 'query' }, description: 'The `next_cursor` of the previous page.' }),
};

export const IdFilter = z.string().regex(ID_PATTERN, 'must be a numeric id');

/** `{ data, next_cursor }`: keyset pages, newest first; next_cursor is null on the last page. */
export function pageSchema<T extends z.ZodType>(item: T, name: string) {
  return z.object({ data: z.array(item), next_cursor: z.string().nullable() }).openapi(name);
}

/** Errors every route may answer with, documented once. */
export const errorResponses = {
  400: { description: 'Invalid input', content: { 'application/json': { schema: ErrorSchema } } },
  401: { description: 'Missing or invalid API key', content: { 'application/json': { schema: ErrorSchema } } },
  403: {
    description: "The key's role is below the one this route needs (`forbidden`, naming it)",
    content: { 'application/json': { schema: ErrorSchema } },
  },
  429: {
    description:
      'Too many wrong keys from this address (`too_many_failed_authentications`): every request from it is refused until `Retry-After` seconds have passed',
    headers: { 'Retry-After': { description: 'Seconds until the address may try again', schema: { type: 'integer' } } },
    content: { 'application/json': { schema: ErrorSchema } },
  },
  500: {
    description: 'A bug (`internal`): the message carries only the request id; the details are in the server log',
    content: { 'application/json': { schema: ErrorSchema } },
  },
  503: {
    description:
      'PostgreSQL or the queue is unreachable or restarting (`unavailable`): retry after `Retry-After` seconds (a trigger with the same `Idempotency-Key`)',
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } },
    content: { 'application/json': { schema: ErrorSchema } },
  },
} as const;
export const notFoundResponse = {
  description: 'Unknown id',
  content: { 'application/json': { schema: ErrorSchema } },
} as const;
export const idempotencyMismatchResponse = {
  description:
    'The `Idempotency-Key` was used before with another payload or run time (`idempotency_mismatch`); the message names the earlier execution',
  content: { 'application/json': { schema: ErrorSchema } },
} as const;
export const conflictResponse = {
  description: 'Conflicts with the current state',
  content: { 'application/json': { schema: ErrorSchema } },
} as const;
export const bodyErrorResponses = {
  413: { description: 'Body larger than the limit', content: { 'application/json': { schema: ErrorSchema } } },
  415: {
    description: 'Content-Type is not application/json',
    content: { 'application/json': { schema: ErrorSchema } },
  },
} as const;

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

/**
 * Validates a time zone and a cron expression with the scheduler's own parser, reporting into a zod refinement.
 * Returns the parsed schedule, or null after adding an issue.
 */
export function checkSchedule(
  ctx: z.RefinementCtx,
  cronExpr: string | null | undefined,
  timezone: string,
): CronSchedule | null {
  if (!isValidTimeZone(timezone)) {
    ctx.addIssue({
      code: 'custom',
      path: ['timezone'],
      message: `unknown time zone ${JSON.stringify(timezone)} (use an IANA name such as "Europe/Paris" or "UTC")`,
    });
    return null;
  }
  if (cronExpr === null || cronExpr === undefined) return null;
  const parsed = parseCron(cronExpr, timezone);
  if (!parsed.ok) {
    ctx.addIssue({ code: 'custom', path: ['cron_expr'], message: parsed.error });
    return null;
  }
  return parsed.schedule;
}
