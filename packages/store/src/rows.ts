/** @module rows — maps PostgreSQL rows to domain objects (ids stay strings: bigint does not fit a JS number). */
import {
  LIST_ERROR_CHARS,
  LIST_OUTPUT_TAIL_CHARS,
  flowTag,
  isoFromUtcText,
  isoString,
  parseTimestamptz,
} from '@jobs/core';
import pg from 'pg';
import type {
  Backoff,
  ChangedExecution,
  CreatedExecution,
  Delivery,
  Execution,
  ExecutionSummary,
  ExecutionSummaryIso,
  FlowLimits,
  Job,
  Lane,
  QueueItem,
  WorkerInfo,
} from '@jobs/core';

export const JOB_COLUMNS = `id, name, cron_expr, timezone, run_at, command, handler, http, lambda, payload, status, max_retries,
  backoff_base_ms, backoff_factor, backoff_max_ms, backoff_jitter, timeout_ms, overlap, misfire, catch_up_max,
  misfire_deadline_ms, lane, priority, max_concurrency, concurrency_key, max_concurrency_per_key, rate_limit,
  rate_period_ms, rate_per_key, retention_days, managed_by, version, next_run_at, created_at, updated_at,
  (SELECT x.started_at FROM executions x
    WHERE x.job_id = jobs.id AND x.started_at IS NOT NULL ORDER BY x.id DESC LIMIT 1) AS last_run_at`;

export function toJob(r: any): Job {
  return {
    id: r.id,
    name: r.name,
    cronExpr: r.cron_expr,
    timezone: r.timezone,
    runAt: r.run_at,
    command: r.command,
    handler: r.handler,
    http: r.http ?? null,
    lambda: r.lambda ?? null,
    payload: r.payload,
    status: r.status,
    maxRetries: r.max_retries,
    backoff: toBackoff(r),
    timeoutMs: r.timeout_ms,
    overlap: r.overlap,
    misfire: r.misfire,
    catchUpMax: r.catch_up_max,
    misfireDeadlineMs: r.misfire_deadline_ms === null ? null : Number(r.misfire_deadline_ms),
    retentionDays: r.retention_days ?? null,
    lane: r.lane,
    priority: r.priority,
    limits: toLimits(r),
    managedBy: r.managed_by ?? null,
    version: r.version,
    nextRunAt: r.next_run_at,
    lastRunAt: r.last_run_at ?? null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export const EXECUTION_COLUMNS = `id, job_id, scheduled_for, attempt, coalesce(root_id, id) AS root_id, retry_of, trigger,
  status, lane, priority, payload, worker_id, lease_expires_at, queued_at, started_at, finished_at, exit_code, output,
  error, duration_ms, flow_key, replayed_by, job_version, deliveries`;

/** A job's limits from its flow columns. */
export function toLimits(r: any): FlowLimits {
  return {
    maxConcurrency: r.max_concurrency ?? null,
    concurrencyKey: r.concurrency_key ?? null,
    maxConcurrencyPerKey: r.max_concurrency_per_key ?? null,
    rateLimit:
      r.rate_limit === null || r.rate_limit === undefined
        ? null
        : { limit: r.rate_limit, periodMs: r.rate_period_ms, perKey: r.rate_per_key },
  };
}

/**
 * SQL for the flow key of an attempt created from job row `job` with payload `payload` (null when the job has no
 * limits): see flow_key() in migration 003.
 */
export const flowKeySql = (job: string, payload: string) =>
  `CASE WHEN ${job}.limited THEN flow_key(${payload}, ${job}.concurrency_key_path) END`;

/** The columns an execution and its list row share, field by field (no spread: a page maps fifty rows). */
function executionFields(r: any): Omit<Execution, 'payload' | 'output' | 'deliveries'> {
  return {
    id: r.id,
    jobId: r.job_id,
    scheduledFor: r.scheduled_for,
    attempt: r.attempt,
    rootId: r.root_id,
    retryOf: r.retry_of,
    trigger: r.trigger,
    status: r.status,
    lane: r.lane,
    priority: r.priority,
    workerId: r.worker_id,
    leaseExpiresAt: r.lease_expires_at,
    queuedAt: r.queued_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    exitCode: r.exit_code,
    error: r.error,
    durationMs: r.duration_ms,
    replayedBy: r.replayed_by ?? null,
    jobVersion: r.job_version ?? null,
  };
}

export function toExecution(r: any): Execution {
  const e = executionFields(r) as Execution;
  e.payload = r.payload;
  e.output = r.output;
  e.deliveries = toDeliveries(r);
  return e;
}

/** The earlier deliveries kept on the row (migration 012), then the current one: the row's own start and end. */
function toDeliveries(r: any): Delivery[] {
  const earlier: Delivery[] = ((r.deliveries ?? []) as any[]).map((d) => ({
    workerId: d.worker_id ?? null,
    startedAt: d.started_at ? new Date(d.started_at) : null,
    endedAt: d.ended_at ? new Date(d.ended_at) : null,
    outcome: d.outcome,
  }));
  if (r.started_at)
    earlier.push({ workerId: r.worker_id, startedAt: r.started_at, endedAt: r.finished_at ?? null, outcome: r.status });
  return earlier;
}

const LIST_ERROR = `CASE WHEN length(error) > ${LIST_ERROR_CHARS} THEN left(error, ${LIST_ERROR_CHARS}) || '… [truncated]' ELSE error END AS error`;

/**
 * A list row: never the payload or the whole output, so a page's size does not depend on what jobs print or carry
 * (the API caps a page's bytes on top of this, see packages/api/src/pagination.ts).
 */
export const EXECUTION_SUMMARY_COLUMNS = `id, job_id, scheduled_for, attempt, coalesce(root_id, id) AS root_id, retry_of,
  trigger, status, lane, priority, worker_id, lease_expires_at, queued_at, started_at, finished_at, exit_code,
  ${LIST_ERROR}, right(output, ${LIST_OUTPUT_TAIL_CHARS}) AS output_tail, duration_ms, replayed_by, job_version`;

/**
 * The API's list row (toExecutionSummaryIso): the summary without the output tail, each instant as a UTC `timestamp`
 * (`AT TIME ZONE 'UTC'`), whose text is the same whatever the session's TimeZone and is cut into the ISO string
 * the API sends (ISO_PAGE_TYPES). A timestamptz would come in the session's offset and need a Date to normalize.
 */
export const EXECUTION_SUMMARY_ISO_COLUMNS = `id, job_id, scheduled_for AT TIME ZONE 'UTC' AS scheduled_for, attempt,
  coalesce(root_id, id) AS root_id, retry_of, trigger, status, lane, priority, worker_id,
  lease_expires_at AT TIME ZONE 'UTC' AS lease_expires_at, queued_at AT TIME ZONE 'UTC' AS queued_at,
  started_at AT TIME ZONE 'UTC' AS started_at, finished_at AT TIME ZONE 'UTC' AS finished_at, exit_code, ${LIST_ERROR},
  duration_ms, replayed_by, job_version`;

const TIMESTAMPTZ_OID = 1184;
const pgTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => Date;
const fastTimestamptz = (text: string) => parseTimestamptz(text, pgTimestamptz);

/**
 * pg's type parsers with a faster one for timestamptz, for the queries that return pages of rows (a list row has
 * five): pass as the query's `types`. Every other type parses as pg parses it everywhere else.
 */
export const PAGE_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    return oid === TIMESTAMPTZ_OID && format !== 'binary'
      ? fastTimestamptz
      : pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

const TIMESTAMP_OID = 1114;
/** A UTC timestamp's text outside isoFromUtcText's fast path: as a timestamptz at offset 0, through the Date. */
const slowIso = (text: string) => isoString(pgTimestamptz(`${text}+00`));
const isoTimestamp = (text: string) => isoFromUtcText(text, slowIso);

/** pg's type parsers, with UTC timestamps (EXECUTION_SUMMARY_ISO_COLUMNS' instants) read as ISO strings. */
export const ISO_PAGE_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    return oid === TIMESTAMP_OID && format !== 'binary' ? isoTimestamp : pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

/** The API's list row from EXECUTION_SUMMARY_ISO_COLUMNS read with ISO_PAGE_TYPES: the instants are strings already. */
export function toExecutionSummaryIso(r: any): ExecutionSummaryIso {
  return executionFields(r) as unknown as ExecutionSummaryIso;
}

export function toExecutionSummary(r: any): ExecutionSummary {
  const e = executionFields(r) as ExecutionSummary;
  e.outputTail = r.output_tail;
  if (r.job_name !== undefined) e.jobName = r.job_name;
  return e;
}

/** Columns for a freshly created row, as `toCreated` reads them. */
export const CREATED_COLUMNS = 'id, job_id, attempt, trigger, status, lane, priority, scheduled_for, flow_key';

export function toCreated(r: any): CreatedExecution {
  return {
    id: r.id,
    jobId: r.job_id,
    attempt: r.attempt,
    trigger: r.trigger,
    status: r.status,
    lane: r.lane as Lane,
    priority: r.priority,
    scheduledFor: r.scheduled_for,
    dueAt: r.scheduled_for,
    flow: flowTag(r.job_id, r.flow_key),
  };
}

export function toQueueItem(r: any): QueueItem {
  return { id: r.id, lane: r.lane, priority: r.priority, dueAt: r.scheduled_for, flow: flowTag(r.job_id, r.flow_key) };
}

export function toWorker(r: any): WorkerInfo {
  return {
    id: r.id,
    kind: r.kind,
    host: r.host,
    lanes: r.lanes,
    concurrency: r.concurrency,
    inFlight: r.in_flight,
    version: r.version,
    release: r.release ?? null,
    startedAt: r.started_at,
    lastHeartbeatAt: r.last_heartbeat_at,
  };
}

/** A job's retry backoff from its backoff_* columns. */
export function toBackoff(r: any): Backoff {
  return { baseMs: r.backoff_base_ms, factor: r.backoff_factor, maxMs: r.backoff_max_ms, jitter: r.backoff_jitter };
}

/** A row just cancelled, from `RETURNING id, job_id, attempt, lane, priority, scheduled_for, worker_id, from_status`. */
export function toCancelled(r: any): ChangedExecution {
  return {
    id: r.id,
    jobId: r.job_id,
    attempt: r.attempt,
    lane: r.lane,
    priority: r.priority,
    dueAt: r.scheduled_for,
    workerId: r.worker_id,
    from: r.from_status,
    to: 'cancelled',
  };
}
