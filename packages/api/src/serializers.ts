/**
 * @module serializers — domain objects (camelCase, ms, Date) to the wire (snake_case, seconds, ISO strings), and the
 * create body to the core's JobSpec.
 */
import {
  changeFor,
  dataFor,
  type Role,
  DEFAULT_BACKOFF,
  NO_LIMITS,
  createAddressPolicy,
  isoString,
  maskChange,
  maskTarget,
  targetWords,
  type AddressPolicy,
  type Execution,
  type ExecutionSummaryIso,
  type Job,
  type JobChange,
  type JobSpec,
  type QueueDepth,
  type WorkerInfo,
} from '@jobs/core';
import type { ExecutionStats } from '@jobs/store';
import { validationFailed } from './errors';
import { limitsJson, toLimits } from './schemas/limits';
import type { ExecutionJson, ExecutionSummaryJson } from './schemas/executions';
import { JobFields, type JobCreateBody, type JobJson } from './schemas/jobs';

const DEFAULT_POLICY = createAddressPolicy();
const iso = (d: Date | null): string | null => (d ? isoString(d) : null);
const seconds = (ms: number) => ms / 1000;

/**
 * The job on the wire. Header secrets never leave the store in full: every response and page goes through here. A
 * `role` below operate sees the payload and an HTTP body with secret-looking fields masked (dataFor).
 */
export function jobJson(job: Job, role?: Role): JobJson {
  return definitionJson(maskTarget(role === undefined ? job : dataFor(role, job)));
}

/** The job in the API's names and units, unmasked: only for comparing and merging definitions (specBody). */
function definitionJson(job: Job): JobJson {
  return {
    id: job.id,
    name: job.name,
    cron_expr: job.cronExpr,
    timezone: job.timezone,
    run_at: iso(job.runAt),
    command: job.command,
    handler: job.handler,
    http: job.http,
    lambda: job.lambda,
    target: targetWords(job),
    payload: job.payload ?? null,
    env: job.env ?? null,
    status: job.status,
    max_retries: job.maxRetries,
    timeout_seconds: seconds(job.timeoutMs),
    backoff: {
      base_seconds: seconds(job.backoff.baseMs),
      factor: job.backoff.factor,
      max_seconds: seconds(job.backoff.maxMs),
      jitter: job.backoff.jitter,
    },
    lane: job.lane,
    priority: job.priority,
    overlap: job.overlap,
    misfire: job.misfire,
    catch_up_max: job.catchUpMax,
    misfire_deadline_seconds: job.misfireDeadlineMs === null ? null : seconds(job.misfireDeadlineMs),
    retention_days: job.retentionDays,
    ...limitsJson(job.limits),
    managed_by: job.managedBy,
    version: job.version,
    next_run_at: iso(job.nextRunAt),
    last_run_at: iso(job.lastRunAt),
    created_at: job.createdAt.toISOString(),
    updated_at: job.updatedAt.toISOString(),
  };
}

/** The execution on the wire; a `role` below operate sees its payload masked as the audit masks it (dataFor). */
export function executionJson(execution: Execution, role?: Role): ExecutionJson {
  const e = role === undefined ? execution : dataFor(role, execution);
  const { payload, output, deliveries, ...rest } = e;
  const instants = {
    scheduledFor: isoString(e.scheduledFor),
    queuedAt: isoString(e.queuedAt),
    startedAt: iso(e.startedAt),
    finishedAt: iso(e.finishedAt),
    leaseExpiresAt: iso(e.leaseExpiresAt),
  };
  // Keys in the schema's order: payload after priority, output before error.
  const {
    worker_id,
    scheduled_for,
    queued_at,
    started_at,
    finished_at,
    lease_expires_at,
    duration_ms,
    exit_code,
    error,
    ...head
  } = executionSummaryJson({ ...rest, ...instants });
  return {
    ...head,
    payload: payload ?? null,
    worker_id,
    scheduled_for,
    queued_at,
    started_at,
    finished_at,
    lease_expires_at,
    duration_ms,
    exit_code,
    output,
    error,
    delivery_count: deliveries.length,
    deliveries: deliveries.map((d) => ({
      worker_id: d.workerId,
      started_at: iso(d.startedAt),
      ended_at: iso(d.endedAt),
      outcome: d.outcome,
    })),
  };
}

/** A list row on the wire: everything but payload and output (the store reads it with its instants as ISO strings). */
export function executionSummaryJson(e: ExecutionSummaryIso): ExecutionSummaryJson {
  return {
    id: e.id,
    job_id: e.jobId,
    status: e.status,
    trigger: e.trigger,
    attempt: e.attempt,
    root_id: e.rootId,
    retry_of: e.retryOf,
    lane: e.lane,
    priority: e.priority,
    worker_id: e.workerId,
    scheduled_for: e.scheduledFor,
    queued_at: e.queuedAt,
    started_at: e.startedAt,
    finished_at: e.finishedAt,
    lease_expires_at: e.leaseExpiresAt,
    duration_ms: e.durationMs,
    exit_code: e.exitCode,
    error: e.error,
    replayed_by: e.replayedBy,
    job_version: e.jobVersion,
  };
}

export function workerJson(w: WorkerInfo) {
  return {
    id: w.id,
    kind: w.kind,
    host: w.host,
    lanes: w.lanes,
    started_at: w.startedAt.toISOString(),
    last_heartbeat_at: w.lastHeartbeatAt.toISOString(),
    concurrency: w.concurrency,
    in_flight: w.inFlight,
    version: w.version,
  };
}

export function statsJson(stats: ExecutionStats, depth: QueueDepth, now: Date) {
  return {
    counts: stats.counts,
    lanes: stats.byLane,
    queue: depth,
    throughput: { last_minute: stats.throughput.lastMinute, last_hour: stats.throughput.lastHour },
    success_rate: { last_hour: stats.successRate.lastHour },
    duration_ms: {
      p50: stats.durationMs.p50 === null ? null : Math.round(stats.durationMs.p50),
      p95: stats.durationMs.p95 === null ? null : Math.round(stats.durationMs.p95),
      sample: stats.durationMs.sample,
    },
    oldest_queued_age_ms: stats.oldestQueuedAgeMs,
    generated_at: now.toISOString(),
  };
}

/**
 * The validated create body as the core's JobSpec. The lane defaults by timeout; asking for the short lane with a
 * timeout above its limit is a 400 naming the limit (a Lambda could not finish such a job).
 */
export function toJobSpec(
  body: JobCreateBody,
  shortLaneMaxTimeoutMs: number,
  targetPolicy: AddressPolicy = DEFAULT_POLICY,
): JobSpec {
  const timeoutMs = body.timeout_seconds * 1000;
  // A literal address the guard would refuse is refused now; a name is checked on what it resolves to, per attempt.
  const refused = body.http ? targetPolicy.refuseLiteralHost(new URL(body.http.url)) : null;
  if (refused) throw validationFailed([{ path: 'http.url', message: refused }]);
  const tooLongForShort = timeoutMs > shortLaneMaxTimeoutMs;
  if (body.lane === 'short' && tooLongForShort) {
    throw validationFailed([
      {
        path: 'lane',
        message: `the short lane allows timeout_seconds up to ${shortLaneMaxTimeoutMs / 1000}; use lane "long" or a shorter timeout`,
      },
    ]);
  }
  const backoff = body.backoff;
  return {
    name: body.name,
    cronExpr: body.cron_expr ?? null,
    timezone: body.timezone,
    runAt: body.run_at ? new Date(body.run_at) : null,
    command: body.command ?? null,
    handler: body.handler ?? null,
    http: body.http
      ? {
          url: body.http.url,
          method: body.http.method,
          headers: body.http.headers,
          ...(body.http.body === undefined ? {} : { body: body.http.body }),
        }
      : null,
    lambda: body.lambda ? { function: body.lambda.function, qualifier: body.lambda.qualifier ?? null } : null,
    payload: body.payload ?? null,
    env: body.env && Object.keys(body.env).length > 0 ? body.env : null,
    status: body.status,
    maxRetries: body.max_retries,
    backoff: backoff
      ? {
          baseMs: Math.round(backoff.base_seconds * 1000),
          factor: backoff.factor,
          maxMs: Math.round(backoff.max_seconds * 1000),
          jitter: backoff.jitter,
        }
      : { ...DEFAULT_BACKOFF },
    timeoutMs,
    overlap: body.overlap,
    misfire: body.misfire,
    catchUpMax: body.catch_up_max,
    misfireDeadlineMs: body.misfire_deadline_seconds ? body.misfire_deadline_seconds * 1000 : null,
    retentionDays: body.retention_days ?? null,
    lane: body.lane ?? (tooLongForShort ? 'long' : 'short'),
    priority: body.priority,
    limits: toLimits(body),
    managedBy: body.managed_by ?? null,
  };
}

/**
 * A definition as a create body (every field, in the API's names and units, `allow_past` aside): what PATCH merges
 * into, and what versions compare. Fields are in the create body's order.
 */
export function specBody(spec: JobSpec): Omit<JobCreateBody, 'allow_past'> {
  const job = definitionJson({
    ...spec,
    http: spec.http ?? null,
    lambda: spec.lambda ?? null,
    env: spec.env ?? null,
    id: '',
    status: spec.status ?? 'active',
    limits: spec.limits ?? NO_LIMITS,
    managedBy: spec.managedBy ?? null,
    retentionDays: spec.retentionDays ?? null,
    version: 0,
    nextRunAt: null,
    lastRunAt: null,
    createdAt: EPOCH,
    updatedAt: EPOCH,
  });
  const body: Record<string, unknown> = {};
  for (const key of Object.keys(JobFields.shape))
    if (key !== 'allow_past') body[key] = (job as Record<string, unknown>)[key] ?? null;
  return body as Omit<JobCreateBody, 'allow_past'>;
}

const EPOCH = new Date(0);

/** A recorded change as the API shows it: an `http` target's secret header values masked, on both sides. */
export const changeJson = (change: JobChange, role?: Role): JobChange =>
  maskChange(role === undefined ? change : changeFor(role, change));

/** The fields whose values differ between two create bodies, with both values. */
export function bodyChanges(before: Record<string, unknown>, after: Record<string, unknown>): JobChange[] {
  const changes: JobChange[] = [];
  for (const field of Object.keys(after)) {
    const old = before[field] ?? null;
    const value = after[field] ?? null;
    if (canonical(old) !== canonical(value)) changes.push({ field, old, new: value });
  }
  return changes;
}

/** JSON with object keys sorted: jsonb gives a payload's keys back in its own order, which is no change. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
