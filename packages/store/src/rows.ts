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
  JobEnv,
  ChangedExecution,
  CreatedExecution,
  Delivery,
  Execution,
  ExecutionStatus,
  ExecutionSummary,
  ExecutionSummaryIso,
  FlowLimits,
  HttpTarget,
  Job,
  JobDefinition,
  JobStatus,
  LambdaTarget,
  Lane,
  MisfirePolicy,
  OverlapPolicy,
  QueueItem,
  Trigger,
  WorkerInfo,
  WorkerKind,
} from '@jobs/core';

// Row types: each table read, column by column, as pg returns it (bigint ids as strings, timestamptz as Date, jsonb
// parsed). A column marked optional is absent from some of the queries whose rows the same mapper reads.

/** A job's backoff_* columns. */
export interface BackoffRow {
  backoff_base_ms: number;
  backoff_factor: number;
  backoff_max_ms: number;
  backoff_jitter: Backoff['jitter'];
}

/** A job's flow-control columns. */
export interface LimitsRow {
  max_concurrency?: number | null;
  concurrency_key?: string | null;
  max_concurrency_per_key?: number | null;
  rate_limit?: number | null;
  rate_period_ms?: number | null;
  rate_per_key?: boolean | null;
}

/** A jobs row as JOB_COLUMNS reads it. */
export interface JobRow extends BackoffRow, LimitsRow {
  id: string;
  name: string;
  cron_expr: string | null;
  timezone: string;
  run_at: Date | null;
  command: string | null;
  handler: string | null;
  http?: HttpTarget | null;
  lambda?: LambdaTarget | null;
  payload: unknown;
  env?: JobEnv | null;
  status: JobStatus;
  max_retries: number;
  timeout_ms: number;
  overlap: OverlapPolicy;
  misfire: MisfirePolicy;
  catch_up_max: number;
  /** bigint: a string. */
  misfire_deadline_ms: string | number | null;
  retention_days?: number | null;
  lane: Lane;
  priority: number;
  managed_by?: string | null;
  version: number;
  next_run_at: Date | null;
  last_run_at?: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The executions columns a full row and a list row share (instants as Date, or as ISO text with ISO_PAGE_TYPES). */
export interface ExecutionFieldsRow<I = Date> {
  id: string;
  job_id: string;
  scheduled_for: I;
  attempt: number;
  root_id: string;
  retry_of: string | null;
  trigger: Trigger;
  status: ExecutionStatus;
  lane: Lane;
  priority: number;
  worker_id: string | null;
  lease_expires_at: I | null;
  queued_at: I;
  started_at: I | null;
  finished_at: I | null;
  exit_code: number | null;
  error: string | null;
  duration_ms: number | null;
  replayed_by?: string | null;
  job_version?: number | null;
}

/** One earlier delivery in executions.deliveries (jsonb: instants as text). */
interface DeliveryJson {
  worker_id?: string | null;
  started_at?: string | null;
  ended_at?: string | null;
  outcome: Delivery['outcome'];
}

/** An executions row as EXECUTION_COLUMNS reads it. */
export interface ExecutionRow extends ExecutionFieldsRow {
  payload: unknown;
  output: string | null;
  deliveries?: DeliveryJson[] | null;
}

/** A list row as EXECUTION_SUMMARY_COLUMNS reads it (job_name when the query joins it). */
export interface ExecutionSummaryRow extends ExecutionFieldsRow {
  output_tail: string | null;
  job_name?: string | null;
}

/** A freshly created executions row as CREATED_COLUMNS reads it. */
export interface CreatedRow {
  id: string;
  job_id: string;
  attempt: number;
  trigger: Trigger;
  status: ExecutionStatus;
  lane: Lane;
  priority: number;
  scheduled_for: Date;
  flow_key: string | null;
}

/** An executions row's queue fields. */
export type QueueItemRow = Pick<CreatedRow, 'id' | 'job_id' | 'lane' | 'priority' | 'scheduled_for' | 'flow_key'>;

/** A workers row. */
export interface WorkerRow {
  id: string;
  kind: WorkerKind;
  host: string;
  lanes: Lane[];
  concurrency: number;
  in_flight: number;
  version: string;
  release?: string | null;
  started_at: Date;
  last_heartbeat_at: Date;
}

/** A row just cancelled (see toCancelled). */
export interface CancelledRow {
  id: string;
  job_id: string;
  attempt: number;
  lane: Lane;
  priority: number;
  scheduled_for: Date;
  worker_id: string | null;
  from_status: ExecutionStatus;
}

/** The jobs columns of a JobDefinition (what an attempt runs with), read by toJobDefinition. */
export const JOB_DEFINITION_COLUMNS = `payload, command, handler, http, lambda, env, timeout_ms, timezone, max_retries,
  backoff_base_ms, backoff_factor, backoff_max_ms, backoff_jitter, overlap, version`;

/** A jobs row as JOB_DEFINITION_COLUMNS reads it. */
export type JobDefinitionRow = Pick<
  JobRow,
  | 'payload'
  | 'command'
  | 'handler'
  | 'http'
  | 'lambda'
  | 'env'
  | 'timeout_ms'
  | 'timezone'
  | 'max_retries'
  | 'overlap'
  | 'version'
  | keyof BackoffRow
>;

export function toJobDefinition(r: JobDefinitionRow): JobDefinition {
  return {
    payload: r.payload,
    command: r.command,
    handler: r.handler,
    http: r.http ?? null,
    lambda: r.lambda ?? null,
    env: r.env ?? null,
    timeoutMs: r.timeout_ms,
    timezone: r.timezone,
    maxRetries: r.max_retries,
    backoff: toBackoff(r),
    overlap: r.overlap,
    version: r.version,
  };
}

export const JOB_COLUMNS = `id, name, cron_expr, run_at, status, misfire, catch_up_max, misfire_deadline_ms, lane, priority,
  max_concurrency, concurrency_key, max_concurrency_per_key, rate_limit, rate_period_ms, rate_per_key, retention_days,
  managed_by, next_run_at, created_at, updated_at, ${JOB_DEFINITION_COLUMNS},
  (SELECT x.started_at FROM executions x
    WHERE x.job_id = jobs.id AND x.started_at IS NOT NULL ORDER BY x.id DESC LIMIT 1) AS last_run_at`;

export function toJob(r: JobRow): Job {
  return {
    ...toJobDefinition(r),
    id: r.id,
    name: r.name,
    cronExpr: r.cron_expr,
    runAt: r.run_at,
    status: r.status,
    misfire: r.misfire,
    catchUpMax: r.catch_up_max,
    misfireDeadlineMs: r.misfire_deadline_ms === null ? null : Number(r.misfire_deadline_ms),
    retentionDays: r.retention_days ?? null,
    lane: r.lane,
    priority: r.priority,
    limits: toLimits(r),
    managedBy: r.managed_by ?? null,
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
export function toLimits(r: LimitsRow): FlowLimits {
  return {
    maxConcurrency: r.max_concurrency ?? null,
    concurrencyKey: r.concurrency_key ?? null,
    maxConcurrencyPerKey: r.max_concurrency_per_key ?? null,
    rateLimit:
      r.rate_limit === null || r.rate_limit === undefined
        ? null
        : // jobs_rate_complete: rate_period_ms (and rate_per_key) are set whenever rate_limit is.
          { limit: r.rate_limit, periodMs: r.rate_period_ms as number, perKey: r.rate_per_key as boolean },
  };
}

/**
 * SQL for the flow key of an attempt created from job row `job` with payload `payload` (null when the job has no
 * limits): see flow_key() in migration 003.
 */
export const flowKeySql = (job: string, payload: string) =>
  `CASE WHEN ${job}.limited THEN flow_key(${payload}, ${job}.concurrency_key_path) END`;

/** The columns an execution and its list row share, field by field (no spread: a page maps fifty rows). */
function executionFields<I>(r: ExecutionFieldsRow<I>) {
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

export function toExecution(r: ExecutionRow): Execution {
  const e = executionFields(r) as Execution;
  e.payload = r.payload;
  e.output = r.output;
  e.deliveries = toDeliveries(r);
  return e;
}

/** The earlier deliveries kept on the row (migration 012), then the current one: the row's own start and end. */
function toDeliveries(r: ExecutionRow): Delivery[] {
  const earlier: Delivery[] = (r.deliveries ?? []).map((d) => ({
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
export function toExecutionSummaryIso(r: ExecutionFieldsRow<string>): ExecutionSummaryIso {
  return executionFields(r) as unknown as ExecutionSummaryIso;
}

export function toExecutionSummary(r: ExecutionSummaryRow): ExecutionSummary {
  const e = executionFields(r) as ExecutionSummary;
  e.outputTail = r.output_tail;
  if (r.job_name !== undefined) e.jobName = r.job_name;
  return e;
}

/** Columns for a freshly created row, as `toCreated` reads them. */
export const CREATED_COLUMNS = 'id, job_id, attempt, trigger, status, lane, priority, scheduled_for, flow_key';

export function toCreated(r: CreatedRow): CreatedExecution {
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

export function toQueueItem(r: QueueItemRow): QueueItem {
  return { id: r.id, lane: r.lane, priority: r.priority, dueAt: r.scheduled_for, flow: flowTag(r.job_id, r.flow_key) };
}

export function toWorker(r: WorkerRow): WorkerInfo {
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
export function toBackoff(r: BackoffRow): Backoff {
  return { baseMs: r.backoff_base_ms, factor: r.backoff_factor, maxMs: r.backoff_max_ms, jitter: r.backoff_jitter };
}

/** A row just cancelled, from `RETURNING id, job_id, attempt, lane, priority, scheduled_for, worker_id, from_status`. */
export function toCancelled(r: CancelledRow): ChangedExecution {
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
