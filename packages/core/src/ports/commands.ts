/** @module ports/commands — what user commands and job edits need of the store and the queue. */
import type { AuditEntry } from '../access';
import type { Execution, ExecutionStatus, FlowLimits, Job, Lane, QueueItem } from '../types';
import type { FlowQueue, LaneState } from './flow';
import type { CreatedExecution } from './tick';

export type JobSpec = Omit<
  Job,
  | 'id'
  | 'status'
  | 'limits'
  | 'retentionDays'
  | 'managedBy'
  | 'version'
  | 'nextRunAt'
  | 'lastRunAt'
  | 'createdAt'
  | 'updatedAt'
  | 'http'
  | 'lambda'
  | 'env'
> & {
  /** Default: none. */
  env?: Job['env'];
  status?: Job['status'];
  /** Default: null (the deployment's HISTORY_RETENTION). */
  retentionDays?: number | null;
  /** Default: none (the target is the command or handler). */
  http?: Job['http'];
  lambda?: Job['lambda'];
  /** Default: no limits. */
  limits?: FlowLimits;
  /** Default: null (made by hand). */
  managedBy?: string | null;
};

/** A row that changed status because of a command, with what is needed to log it and to tell Redis. */
export interface ChangedExecution extends QueueItem {
  jobId: string;
  attempt: number;
  from: ExecutionStatus;
  to: ExecutionStatus;
  workerId: string | null;
}

/**
 * Every command takes an optional audit entry: the store writes it in the same transaction as the change, and only
 * when something changed (a refused or no-op command leaves no row). The store fills in the target id of a new row and
 * the old values it reads under its lock.
 */
export interface CommandStore extends EditStore {
  /** `actor` is recorded as the author of version 1 (default "api"). */
  jobInsert(spec: JobSpec & { nextRunAt: Date | null; actor?: string }, audit?: AuditEntry): Promise<Job>;
  jobGet(id: string): Promise<Job | null>;
  /** Sets status and next_run_at; cancels waiting scheduled runs when pausing. Null if the job does not exist. */
  jobSetStatus(
    input: { id: string; status: Job['status']; nextRunAt: Date | null },
    audit?: AuditEntry,
  ): Promise<{ job: Job; cancelled: ChangedExecution[] } | null>;
  /** Soft-deletes the job and cancels its live executions. Null if it does not exist. */
  jobDelete(id: string, audit?: AuditEntry): Promise<{ cancelled: ChangedExecution[] } | null>;
  /** Inserts a manual run; with an idempotency key, returns the earlier execution for a repeated key. */
  /** `record` is the whole row as inserted (or found), so callers need not read it again. */
  /** `samePayload`: for a repeated key, whether the earlier call sent the same payload. */
  executionTrigger(input: {
    jobId: string;
    payload: unknown;
    idempotencyKey: string | null;
    traceparent?: string | null;
    audit?: AuditEntry;
  }): Promise<{ execution: CreatedExecution; record: Execution; created: boolean; samePayload?: boolean } | null>;
  executionCancel(
    id: string,
    audit?: AuditEntry,
  ): Promise<{ changed: ChangedExecution | null; status: ExecutionStatus } | null>;
  /** Replays once (unless `force`); `replayedBy` is the replay the row already had before this call. */
  executionReplay(
    id: string,
    options?: { force?: boolean; audit?: AuditEntry },
  ): Promise<{ execution: CreatedExecution | null; status: ExecutionStatus; replayedBy: string | null } | null>;
  /** Sets the flow key of the job's waiting attempts from its current limits; returns those that changed. */
  executionsRetag(jobId: string): Promise<QueueItem[]>;
  /** Pauses or resumes a lane (a new version of its state); idempotent. */
  laneSetPaused(
    input: { lane: Lane; paused: boolean },
    audit?: AuditEntry,
  ): Promise<LaneState & { pausedAt: Date | null }>;
}

export interface CommandQueue extends EditQueue {
  push(items: readonly QueueItem[]): Promise<void>;
  /** Best effort: drops waiting ids from the ready and delayed sets and tells their worker to kill running ones. */
  withdraw(items: readonly (QueueItem & { running: boolean })[]): Promise<void>;
  /** Removes ids from the dead-letter list (replayed ones; `oldest`: deleted by retention, at its old end). */
  forgetDead(items: readonly { id: string; lane: Lane }[], options?: { oldest?: boolean }): Promise<void>;
  /** Copies job limits and lane states (never slots: `full` is false) to the queue. */
  flowRestore: FlowQueue['flowRestore'];
}

/** One field of a change, in the API's names and units (what GET /jobs/{id}/versions shows). */
export interface JobChange {
  field: string;
  old: unknown;
  new: unknown;
}

export interface JobVersion {
  jobId: string;
  version: number;
  actor: string;
  changes: JobChange[];
  createdAt: Date;
}

export interface JobUpdate {
  id: string;
  /** The version the change was computed from: the update applies only if the job is still at it. */
  expectedVersion: number;
  spec: JobSpec;
  changes: JobChange[];
  actor: string;
  /** Null: the schedule did not change (next_run_at and materialised fire times are left alone). */
  schedule: {
    nextRunAt: Date | null;
    cancelFrom: Date;
    cancelAll: boolean;
    /**
     * Whether a queued fire time after `cancelFrom` is one of the new schedule's: those stay (the tick would only
     * queue them again), the others are cancelled.
     */
    isFireTime: (at: Date) => boolean;
    /**
     * A fire time that was due before the edit but not yet materialised (next_run_at at or before `cancelFrom`)
     * stays the next run: the tick then plans it, and the new schedule after it.
     */
    keepDue: boolean;
  } | null;
  /** Whether waiting attempts take the new lane, priority and flow key. */
  moveWaiting: boolean;
  /** Written with the version row, in the same transaction. */
  audit?: AuditEntry;
}

/** A waiting attempt that changed lane, priority or flow key: where the queue holds it, and where it belongs now. */
export interface MovedExecution {
  from: QueueItem;
  to: QueueItem;
}

interface EditStore {
  jobGetByName(name: string): Promise<Job | null>;
  /** Applies an update under the job's row lock. 'stale': the job is no longer at `expectedVersion`; null: gone. */
  jobUpdate(
    input: JobUpdate,
  ): Promise<{ job: Job; cancelled: ChangedExecution[]; moved: MovedExecution[] } | 'stale' | null>;
  /** Inserts the job unless a live job has its name (then null). */
  jobInsertIfAbsent(spec: JobSpec & { nextRunAt: Date | null; actor: string }, audit?: AuditEntry): Promise<Job | null>;
  jobVersions(jobId: string): Promise<JobVersion[] | null>;
  /** Creates a backfill execution per fire time that has no execution yet, under the job's row lock. */
  executionsBackfill(input: {
    jobId: string;
    fireTimes: Date[];
    audit?: AuditEntry;
  }): Promise<CreatedExecution[] | null>;
  /** The executions that already hold some of these fire times (what a backfill skips), oldest first. */
  executionsAtFireTimes(input: {
    jobId: string;
    fireTimes: Date[];
  }): Promise<{ fireTime: Date; executionId: string }[]>;
}

interface EditQueue {
  /** Takes each `from` out of the queue and, if it was there, pushes its `to` (a claimed one is left alone). */
  move(moves: readonly MovedExecution[]): Promise<void>;
}
