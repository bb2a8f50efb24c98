/** @module types — the domain vocabulary shared by every package: jobs, executions, workers, transitions. */
import type { JobEnv } from './secret-refs';
import type { HttpTarget, LambdaTarget } from './targets';

export const EXECUTION_STATUSES = [
  'queued',
  'retrying',
  'running',
  'succeeded',
  'failed',
  'dead',
  'cancelled',
  'skipped',
] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** Statuses an execution can still leave; everything else is final. */
export const LIVE_STATUSES = ['queued', 'retrying', 'running'] as const satisfies readonly ExecutionStatus[];

export const TRIGGERS = ['cron', 'once', 'manual', 'retry', 'replay', 'backfill'] as const;
export type Trigger = (typeof TRIGGERS)[number];

export const LANES = ['short', 'long'] as const;
export type Lane = (typeof LANES)[number];

export const OVERLAP_POLICIES = ['allow', 'forbid', 'replace'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

export const MISFIRE_POLICIES = ['skip', 'run_once', 'catch_up'] as const;
export type MisfirePolicy = (typeof MISFIRE_POLICIES)[number];

export type JobStatus = 'active' | 'paused';

export interface Backoff {
  /** First retry waits up to this long. */
  baseMs: number;
  /** Each further retry multiplies the ceiling by this. */
  factor: number;
  /** Ceiling for any single delay. */
  maxMs: number;
  /** `full`: uniform in [0, ceiling] (AWS "full jitter"); `none`: exactly the ceiling. */
  jitter: 'full' | 'none';
}

/** At most `limit` attempts start in any window of `periodMs` (per concurrency key value when `perKey`). */
interface RateLimit {
  limit: number;
  periodMs: number;
  perKey: boolean;
}

/**
 * A job's flow control. Enforced where attempts are claimed (the queue adapter), across every worker and lane:
 * - `maxConcurrency`: at most this many attempts of the job run at once;
 * - `concurrencyKey` (a JSON Pointer into the payload) with `maxConcurrencyPerKey`: attempts whose payloads give the
 *   same value there run at most that many at once (a payload without the key, or with null there, counts as one
 *   shared value);
 * - `rateLimit`: at most `limit` attempts start in any window of `periodMs`, per key value when `perKey`.
 * An attempt held back waits queued, in order (priority, then due time), without delaying other jobs.
 */
export interface FlowLimits {
  maxConcurrency: number | null;
  concurrencyKey: string | null;
  maxConcurrencyPerKey: number | null;
  rateLimit: RateLimit | null;
}

export const NO_LIMITS: FlowLimits = Object.freeze({
  maxConcurrency: null,
  concurrencyKey: null,
  maxConcurrencyPerKey: null,
  rateLimit: null,
});

export function isLimited(limits: FlowLimits): boolean {
  return limits.maxConcurrency !== null || limits.maxConcurrencyPerKey !== null || limits.rateLimit !== null;
}

export interface Job {
  id: string;
  name: string;
  cronExpr: string | null;
  /** The IANA time zone of its schedule; a command runs with TZ set to it. */
  timezone: string;
  runAt: Date | null;
  /** The target: exactly one of command, handler, http and lambda is set. */
  command: string | null;
  handler: string | null;
  http: HttpTarget | null;
  lambda: LambdaTarget | null;
  payload: unknown;
  /** A command's own variables (plain, or secret references resolved at the attempt); null: none. */
  env: JobEnv | null;
  status: JobStatus;
  maxRetries: number;
  backoff: Backoff;
  timeoutMs: number;
  overlap: OverlapPolicy;
  misfire: MisfirePolicy;
  /** catch_up: at most this many missed fire times are run. */
  catchUpMax: number;
  /** A missed fire time older than this is dropped whatever the policy. Null: no deadline. */
  misfireDeadlineMs: number | null;
  /** Days its finished executions are kept (failed and dead ones at least the dead retention); 0: forever; null: the default. */
  retentionDays: number | null;
  lane: Lane;
  priority: number;
  limits: FlowLimits;
  /** Set by a jobs-as-code apply (its owner name): only such jobs may be pruned by a later apply. */
  managedBy: string | null;
  /** 1 at creation, +1 on every change of the definition (see job_versions). */
  version: number;
  nextRunAt: Date | null;
  lastRunAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface Execution {
  id: string;
  jobId: string;
  scheduledFor: Date;
  attempt: number;
  rootId: string;
  retryOf: string | null;
  trigger: Trigger;
  status: ExecutionStatus;
  lane: Lane;
  priority: number;
  payload: unknown;
  workerId: string | null;
  leaseExpiresAt: Date | null;
  queuedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  exitCode: number | null;
  output: string | null;
  error: string | null;
  durationMs: number | null;
  /** The execution a replay of this one created (the latest, after a forced replay); null: never replayed. */
  replayedBy: string | null;
  /** The version of its job's definition it started with (null: not started, or started before versions). */
  jobVersion: number | null;
  /**
   * Every time a worker took this attempt, oldest first: earlier deliveries that ended without an outcome (given
   * back at shutdown, or lost with their worker before the start was recorded), then the current one. Empty until
   * it starts; more than one: it was delivered again.
   */
  deliveries: Delivery[];
}

/** How an earlier delivery of an attempt ended: given back at shutdown, or lost with its worker before its start was recorded. */
export const DELIVERY_ENDS = ['released', 'lost'] as const;
type DeliveryEnd = (typeof DELIVERY_ENDS)[number];

/** One delivery of an attempt to a worker. */
export interface Delivery {
  workerId: string | null;
  /** Null for a delivery lost before its start was recorded. */
  startedAt: Date | null;
  /** Null while it runs. */
  endedAt: Date | null;
  /** `released` or `lost` for an earlier delivery; for the last one, the execution's status. */
  outcome: DeliveryEnd | ExecutionStatus;
}

/**
 * An execution as lists show it: no payload and no output (each up to 64 KiB; one execution has them), the error
 * cut at LIST_ERROR_CHARS, and the output's last LIST_OUTPUT_TAIL_CHARS characters for a one-line excerpt.
 */
export interface ExecutionSummary extends Omit<Execution, 'payload' | 'output' | 'deliveries'> {
  outputTail: string | null;
  /** Read only when a list asks for it (the dashboard's): the job's name, null when the job is deleted. */
  jobName?: string | null;
}

/** The instants of an execution, as its list rows carry them. */
type ExecutionInstant = 'scheduledFor' | 'queuedAt' | 'startedAt' | 'finishedAt' | 'leaseExpiresAt';

/**
 * A list row as the API sends it: no output tail and no job name, and the instants as ISO 8601 strings (`Date`
 * becomes `string`), read as text from PostgreSQL and never made into Dates: a page of them is what the API returns.
 */
export type ExecutionSummaryIso = Omit<ExecutionSummary, ExecutionInstant | 'outputTail' | 'jobName'> & {
  [K in ExecutionInstant]: Execution[K] extends Date ? string : string | null;
};

/** Longest error text a list row carries (a longer one is cut and marked). */
export const LIST_ERROR_CHARS = 2048;
/** Characters of the output's end a list row carries. */
export const LIST_OUTPUT_TAIL_CHARS = 200;

export type WorkerKind = 'lambda' | 'container' | 'local';

export interface WorkerInfo {
  id: string;
  kind: WorkerKind;
  host: string;
  startedAt: Date;
  lastHeartbeatAt: Date;
  concurrency: number;
  inFlight: number;
  version: string;
  lanes: Lane[];
  /** The deploy's release this worker runs (RELEASE_ID); null or absent: none, it never retires for a release. */
  release?: string | null;
  /**
   * Written by workers only: how recent a heartbeat of a newer release's worker must be to count as that worker
   * running (see WorkerStore.workerUpsert).
   */
  liveWithinMs?: number;
}

/** What Redis needs to deliver one execution: its id, when it is due, and its ordering. */
export interface QueueItem {
  id: string;
  lane: Lane;
  priority: number;
  dueAt: Date;
  /** Set for an attempt of a job with limits: the job and the concurrency key value its payload gave. */
  flow?: FlowTag;
}

/** Which limits an attempt counts against: its job's, and its key value's ('' when the job has no key). */
export interface FlowTag {
  jobId: string;
  key: string;
}

/** One state change of one execution: the unit of the structured log and of published events. */
export interface Transition {
  event: 'execution.transition';
  jobId: string;
  executionId: string;
  attempt: number;
  from: ExecutionStatus | null;
  to: ExecutionStatus;
  workerId: string | null;
  at: Date;
  trigger?: Trigger;
  error?: string | null;
  durationMs?: number | null;
  exitCode?: number | null;
  /** The name of the API key whose request caused it (trigger, cancel, replay, pause, delete); never the key. */
  by?: string;
}
