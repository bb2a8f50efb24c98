/** @module schemas/jobs — the job create body (strict, snake_case, seconds) and the job resource. */
import { z } from '@hono/zod-openapi';
import { LANES, MISFIRE_POLICIES, OVERLAP_POLICIES } from '@jobs/core';
import { InputInstant, Instant, NullableInstant, checkSchedule } from './common';
import { limitInputFields, limitOutputFields, refineLimits } from './limits';
import { JobEnvInput } from './env';
import { HttpTargetInput, HttpTargetJson, LambdaTargetInput, LambdaTargetJson } from './targets';

const HANDLER_NAME = /^[A-Za-z0-9_.:-]{1,100}$/;
const MAX_PAYLOAD_BYTES = 64 * 1024;
const NO_CONTROL_CHARS = /^[^\p{Cc}]*$/u;
/**
 * Format characters (bidi controls such as U+202E, zero-width ones such as U+200B, U+FEFF) and line separators draw
 * nothing or reorder what is drawn: `invoice\u202Egpj.exe` shows as `invoiceexe.jpg`. A name is what people read.
 */
const NO_INVISIBLE_CHARS = /^[^\p{Cf}\p{Zl}\p{Zp}]*$/u;
const MAX_DEADLINE_SECONDS = 366 * 86_400;
const JOB_STATUSES = ['active', 'paused'] as const;

/** PostgreSQL text and jsonb cannot hold U+0000; refusing it here keeps it a 400 instead of a failed INSERT. */
const NUL_MESSAGE = 'must not contain NUL (\\u0000) characters';

/**
 * An unpaired UTF-16 surrogate (JSON allows `"\ud800"`) is not Unicode: PostgreSQL's jsonb refuses it (a failed
 * INSERT) and text columns would store U+FFFD instead, so the value would not read back as sent. Refused with a 400.
 */
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const SURROGATE_MESSAGE = 'must be valid Unicode text (no unpaired UTF-16 surrogates such as \\ud800)';
const isUnicodeText = (s: string): boolean => !UNPAIRED_SURROGATE.test(s);

/**
 * JSON numbers are read as doubles: `1e400` becomes Infinity (stored as null), and integers beyond 2^53 - 1 lose
 * digits. Such a payload is refused, not stored as something else.
 */
const NUMBER_MESSAGE = `holds a number JSON cannot carry exactly (beyond ±${Number.MAX_SAFE_INTEGER} or not finite); send it as a string`;

/** Deepest nesting of arrays and objects a payload may have (deeper JSON overflows the stack of whoever walks it). */
const MAX_PAYLOAD_DEPTH = 100;

/**
 * Why a payload cannot be stored (nesting, NUL, unpaired surrogates in strings or keys), or null. Iterative, so a
 * hostile nesting depth is reported instead of overflowing the stack (a 500).
 */
function payloadProblem(payload: unknown): string | null {
  const stack: [unknown, number][] = [[payload, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'number') {
      if (!Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER) return NUMBER_MESSAGE;
      continue;
    }
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return `strings and keys ${NUL_MESSAGE}`;
      if (!isUnicodeText(value)) return `strings and keys ${SURROGATE_MESSAGE}`;
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_PAYLOAD_DEPTH) return `nests deeper than ${MAX_PAYLOAD_DEPTH} levels of arrays and objects`;
    for (const [key, v] of Object.entries(value)) {
      if (!Array.isArray(value)) stack.push([key, depth]);
      stack.push([v, depth + 1]);
    }
  }
  return null;
}

/** Adds an issue when a payload nests too deeply, holds NUL or invalid Unicode, or serialises to more than 64 KiB. */
export function checkPayload(ctx: z.RefinementCtx, payload: unknown): void {
  if (payload === undefined) return;
  const problem = payloadProblem(payload);
  if (problem) {
    ctx.addIssue({ code: 'custom', path: ['payload'], message: problem });
    return;
  }
  const bytes = Buffer.byteLength(JSON.stringify(payload) ?? 'null', 'utf8');
  if (bytes > MAX_PAYLOAD_BYTES) {
    ctx.addIssue({
      code: 'custom',
      path: ['payload'],
      message: `serialises to ${bytes} bytes; the limit is ${MAX_PAYLOAD_BYTES} (64 KiB)`,
    });
  }
}

const TARGET_FIELDS = ['command', 'handler', 'http', 'lambda'] as const;
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const given = (v: unknown) => v !== null && v !== undefined;

/** Checks across fields; values are read defensively since other fields may have failed their own checks. */
function refineJob(body: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const timezone = body.timezone === undefined ? 'UTC' : body.timezone;
  if (
    typeof timezone === 'string' &&
    (body.cron_expr === undefined || body.cron_expr === null || typeof body.cron_expr === 'string')
  ) {
    checkSchedule(ctx, body.cron_expr, timezone);
  }
  if (given(body.cron_expr) && given(body.run_at)) {
    ctx.addIssue({
      code: 'custom',
      path: ['run_at'],
      message: 'cron_expr and run_at are mutually exclusive: give one, or neither for a manual-only job',
    });
  }
  const targets = TARGET_FIELDS.filter((field) => given(body[field]));
  if (targets.length > 1) {
    ctx.addIssue({
      code: 'custom',
      path: [targets[1]!],
      message: `give exactly one target (command, handler, http or lambda), not ${targets.join(' and ')}`,
    });
  } else if (targets.length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['command'],
      message:
        'give exactly one target: command (a shell command), handler (a registered handler name), http ({ "url": ... }) or lambda ({ "function": ... })',
    });
  }
  checkPayload(ctx, body.payload);
  if (isRecord(body.http) && body.http.body !== undefined) {
    const problem = payloadProblem(body.http.body);
    if (problem) ctx.addIssue({ code: 'custom', path: ['http', 'body'], message: problem });
  }
  if (isRecord(body.env) && Object.keys(body.env).length > 0 && targets.length === 1 && targets[0] !== 'command') {
    ctx.addIssue({
      code: 'custom',
      path: ['env'],
      message: `env is a command's environment; a ${targets[0]} job has none (send "env": null)`,
    });
  }
  refineLimits(body, ctx);
}

const BackoffInput = z
  .strictObject({
    base_seconds: z
      .number()
      .min(0)
      .max(86_400)
      .default(1)
      .openapi({ description: 'First retry waits up to this long.' }),
    factor: z.number().min(1).max(10).default(2).openapi({ description: 'Each further retry multiplies the ceiling.' }),
    max_seconds: z.number().min(0).max(86_400).default(300).openapi({ description: 'Ceiling of any one delay.' }),
    jitter: z.enum(['full', 'none']).default('full').openapi({ description: '`full`: uniform in [0, ceiling].' }),
  })
  .refine((b) => b.max_seconds >= b.base_seconds, { path: ['max_seconds'], message: 'must be at least base_seconds' })
  .openapi('BackoffInput');

/** The create body's fields, before the checks across them: PATCH reuses them (without defaults) for its body. */
export const JobFields = z.strictObject({
  name: z
    .string()
    // Before trimming, which would silently drop a leading U+FEFF.
    .regex(
      NO_INVISIBLE_CHARS,
      'must not contain invisible formatting characters (bidi controls, zero-width characters, line separators)',
    )
    .trim()
    // One spelling per name: a composed and a decomposed "é" are the same name (and the same unique key).
    .overwrite((name) => name.normalize('NFC'))
    .min(1)
    .max(200)
    .regex(NO_CONTROL_CHARS, 'must not contain control characters')
    .refine(isUnicodeText, SURROGATE_MESSAGE)
    .openapi({
      example: 'nightly-report',
      description: 'Unique among live jobs; trimmed and NFC-normalised; no control or invisible formatting characters.',
      // Both checks as one JSON Schema pattern (the generator would print the first regex with its flag appended).
      pattern: '^[^\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}]*$',
    }),
  cron_expr: z.string().max(1000).nullish().openapi({
    example: '*/5 * * * *',
    description: '5 fields, or 6 with leading seconds, or a macro such as @daily.',
  }),
  timezone: z
    .string()
    .default('UTC')
    .openapi({ example: 'Europe/Paris', description: 'IANA zone of cron_expr (default UTC).' }),
  run_at: InputInstant.nullish().openapi({
    description:
      'One-off run time (ISO 8601 instant). Mutually exclusive with cron_expr; neither: manual-only. More than 5 s in the past: 400 unless allow_past.',
  }),
  allow_past: z
    .boolean()
    .default(false)
    .openapi({ description: 'Accept a run_at in the past (the job then runs once, right away). Not stored.' }),
  command: z
    .string()
    .min(1)
    .max(10_000)
    .refine((c) => !c.includes('\u0000'), NUL_MESSAGE)
    .refine(isUnicodeText, SURROGATE_MESSAGE)
    .nullish()
    .openapi({ example: 'echo hello', description: 'Shell command (exactly one of command, handler, http, lambda).' }),
  handler: z
    .string()
    .regex(HANDLER_NAME, 'must match ^[A-Za-z0-9_.:-]{1,100}$')
    .nullish()
    .openapi({ description: 'Registered handler name.' }),
  http: HttpTargetInput.nullish().openapi({
    description: 'An HTTP request per attempt (see the README: outcome rules, signing, the address guard).',
  }),
  lambda: LambdaTargetInput.nullish().openapi({
    description: 'A RequestResponse Lambda invocation per attempt, the payload as the event.',
  }),
  payload: z.unknown().optional().openapi({ description: 'Any JSON (at most 64 KiB serialised).' }),
  env: JobEnvInput.nullish(),
  max_retries: z.number().int().min(0).max(100).default(3),
  timeout_seconds: z.number().int().min(1).max(86_400).default(300),
  backoff: BackoffInput.optional().openapi({ description: 'Defaults: 1 s base, factor 2, 300 s max, full jitter.' }),
  lane: z
    .enum(LANES)
    .optional()
    .openapi({ description: 'Default: long when timeout_seconds exceeds the short-lane limit, else short.' }),
  priority: z.number().int().min(-100).max(100).default(0),
  overlap: z.enum(OVERLAP_POLICIES).default('allow'),
  misfire: z.enum(MISFIRE_POLICIES).default('run_once'),
  catch_up_max: z.number().int().min(1).max(1000).default(10),
  misfire_deadline_seconds: z.number().int().min(1).max(MAX_DEADLINE_SECONDS).nullish(),
  retention_days: z.number().int().min(0).max(36_500).nullish().openapi({
    description:
      'Days finished executions are kept (failed and dead ones at least DEAD_RETENTION); 0: forever; null: HISTORY_RETENTION.',
  }),
  status: z.enum(JOB_STATUSES).default('active'),
  managed_by: z.string().regex(HANDLER_NAME, 'must match ^[A-Za-z0-9_.:-]{1,100}$').nullish().openapi({
    example: 'jobs-apply',
    description: 'Set by `npm run jobs -- apply`: jobs an apply created and may prune. Null: made by hand.',
  }),
  ...limitInputFields,
});

export const JobCreate = JobFields
  // Runs even when a field failed (zod skips refinements after such issues), so one 400 lists every problem.
  .superRefine((body, ctx) => refineJob(body, ctx), { when: (payload) => isRecord(payload.value) })
  .openapi('JobCreate');

/** A field of the create body without its default: PATCH must not reset what it does not name. */
function withoutDefault(field: z.ZodType): z.ZodType {
  return field instanceof z.ZodDefault ? (field.unwrap() as z.ZodType) : field;
}

/**
 * The PATCH body: any subset of the create fields, strict. The fields given are checked on their own here, then the
 * job they produce (the current definition with these fields replaced) is checked exactly as a create body is.
 */
export const JobPatch = z
  .strictObject(
    Object.fromEntries(
      Object.entries(JobFields.shape).map(([name, field]) => [name, withoutDefault(field).optional()]),
    ),
  )
  .openapi('JobPatch', {
    description: 'Any subset of the JobCreate fields; null clears a nullable field (JSON Merge Patch).',
  });

export type JobCreateBody = z.infer<typeof JobCreate>;

export const Job = z
  .object({
    id: z.string().openapi({ example: '42' }),
    name: z.string(),
    cron_expr: z.string().nullable(),
    timezone: z.string(),
    run_at: NullableInstant,
    command: z.string().nullable(),
    handler: z.string().nullable(),
    http: HttpTargetJson.nullable().openapi({ description: 'Secret-looking header values are masked.' }),
    lambda: LambdaTargetJson.nullable(),
    target: z
      .string()
      .openapi({ example: 'POST https://api.example.com/hooks/nightly', description: 'The target in words.' }),
    payload: z.unknown(),
    env: z
      .record(z.string(), z.union([z.string(), z.object({ secret: z.string(), format: z.string().optional() })]))
      .nullable()
      .openapi({ description: "A command's own variables; a secret shows as its reference, never its value." }),
    status: z.enum(JOB_STATUSES),
    max_retries: z.number().int(),
    timeout_seconds: z.number(),
    backoff: z.object({
      base_seconds: z.number(),
      factor: z.number(),
      max_seconds: z.number(),
      jitter: z.enum(['full', 'none']),
    }),
    lane: z.enum(LANES),
    priority: z.number().int(),
    overlap: z.enum(OVERLAP_POLICIES),
    misfire: z.enum(MISFIRE_POLICIES),
    catch_up_max: z.number().int(),
    misfire_deadline_seconds: z.number().nullable(),
    retention_days: z.number().int().nullable(),
    ...limitOutputFields,
    managed_by: z.string().nullable().openapi({ description: 'Set when a jobs-as-code apply created the job.' }),
    version: z
      .number()
      .int()
      .openapi({ example: 1, description: '1 at creation, +1 on every change of the definition.' }),
    next_run_at: NullableInstant.openapi({
      description: 'Next fire time not yet materialised; null when paused or none is left.',
    }),
    last_run_at: NullableInstant.openapi({ description: 'When the latest attempt started.' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Job');

export type JobJson = z.infer<typeof Job>;

export const JobListQuery = z.object({
  status: z
    .enum(JOB_STATUSES)
    .optional()
    .openapi({ param: { name: 'status', in: 'query' } }),
});

/** The PUT /jobs/by-name/{name} body: a whole create body; `name` may be left out (the path names the job). */
export const JobPut = JobFields.extend({ name: JobFields.shape.name.optional() })
  .superRefine((body, ctx) => refineJob(body, ctx), { when: (payload) => isRecord(payload.value) })
  .openapi('JobPut');

export type JobPutBody = z.infer<typeof JobPut>;

export const NameParams = z.object({
  name: z.string().openapi({ param: { name: 'name', in: 'path' }, example: 'nightly-report' }),
});

/** Checks and normalises a job name from a path (trimmed, NFC) by the create body's rules. */
export const JobName = JobFields.shape.name;

const JobVersion = z
  .object({
    version: z.number().int().openapi({ example: 2 }),
    actor: z
      .string()
      .openapi({ example: 'api', description: 'Who made the change: "api", "dashboard" (later, the API key name).' }),
    created_at: Instant,
    changes: z
      .array(z.object({ field: z.string().openapi({ example: 'cron_expr' }), old: z.unknown(), new: z.unknown() }))
      .openapi({
        description: 'The fields this version changed, in create-body names and units; empty for version 1.',
      }),
  })
  .openapi('JobVersion');

export const JobPlan = z
  .object({
    action: z.enum(['create', 'update', 'unchanged']),
    job_id: z.string().nullable().openapi({ description: 'The live job of that name; null when it would be created.' }),
    changes: JobVersion.shape.changes,
  })
  .openapi('JobPlan');

export const JobVersionList = z.object({ data: z.array(JobVersion) }).openapi('JobVersionList');

export const BackfillBody = z
  .strictObject({
    from: InputInstant.openapi({
      example: '2025-03-08T00:00:00Z',
      description: 'First instant of the range (inclusive); not before 1970-01-01T00:00:00Z.',
    }),
    to: InputInstant.openapi({
      example: '2025-03-10T00:00:00Z',
      description: 'End of the range (exclusive); not after now.',
    }),
    dry_run: z.boolean().default(false).openapi({ description: 'List the fire times; create nothing.' }),
  })
  .openapi('BackfillRequest');

export const BackfillResult = z
  .object({
    fire_times: z.array(Instant).openapi({ description: "The job's fire times in [from, to), at most 1,000." }),
    created: z.number().int().openapi({ description: 'Executions created (trigger "backfill"); 0 on a dry run.' }),
    execution_ids: z.array(z.string()),
    already_run: z.array(z.object({ fire_time: Instant, execution_id: z.string() })).openapi({
      description: 'Fire times of the range that already had an execution before this call (skipped), with it.',
    }),
    dry_run: z.boolean(),
  })
  .openapi('BackfillResult');
