/** @module ports/worker — what a worker needs of the store, the queue and a runner. */
import type { Cancellation } from '../cancellation';
import type { Job, Lane, QueueItem, Trigger, WorkerInfo } from '../types';
import type { Claim } from './basics';
import type { ClaimState, FlowQueue, FlowStore } from './flow';
import type { CreatedExecution } from './tick';

/**
 * What an attempt runs with of its job's definition: the one list of these fields (the store reads them per job
 * and caches them by version, see JOB_DEFINITION_COLUMNS in packages/store).
 */
export type JobDefinition = Pick<
  Job,
  | 'payload'
  | 'command'
  | 'handler'
  | 'http'
  | 'lambda'
  | 'env'
  | 'timeoutMs'
  | 'timezone'
  | 'maxRetries'
  | 'backoff'
  | 'overlap'
  | 'version'
>;

/**
 * An execution a worker won in PostgreSQL, with everything needed to run it: its own fields and its job's definition
 * (`payload` is the execution's own when it has one; `version` becomes `jobVersion`).
 */
export interface StartedExecution extends Omit<JobDefinition, 'version' | 'env'> {
  /** A command's own variables, secret references unresolved (the runner resolves them); null or absent: none. */
  env?: Job['env'];
  id: string;
  token: string;
  jobId: string;
  attempt: number;
  rootId: string;
  trigger: Trigger;
  lane: Lane;
  priority: number;
  scheduledFor: Date;
  /** The concurrency key value it was queued under (null: its job had no limits then). */
  flowKey: string | null;
  /** The version of the job's definition above (recorded on the execution when it starts). */
  jobVersion: number;
  /** Which delivery of this attempt this is: 1, or more when it was given back or lost and delivered again. */
  delivery: number;
  /**
   * W3C trace context of what started it (the triggering request's span; a retry keeps its chain's), or, while it
   * runs under tracing, its attempt span's; null or absent: none (cron runs start their own trace).
   */
  traceparent?: string | null;
}

/** The recorded result of one attempt, fenced by its lease token. */
export interface Outcome {
  id: string;
  token: string;
  jobId: string;
  attempt: number;
  lane: Lane;
  priority: number;
  status: 'succeeded' | 'failed' | 'dead';
  exitCode: number | null;
  output: string | null;
  error: string | null;
  durationMs: number;
  /** For `failed`: how long the next attempt waits. */
  retryDelayMs: number | null;
  /** The worker that ran the attempt (recorded when its start was not written separately). */
  workerId: string | null;
  /** How long ago, at write time, the attempt started: dates a start written together with its outcome. */
  startedAgoMs?: number;
  /** The job version it ran (written when its start was not written separately). */
  jobVersion?: number;
}

/** A start record: attempt `id` has been running for `elapsedMs` under `token`. */
export interface StartRecord {
  id: string;
  token: string;
  elapsedMs: number;
  /** The job version it runs (see StartedExecution). */
  jobVersion?: number;
}

export interface RecordResult extends FinishResult {
  /** Ids whose start record was written; the others are no longer waiting (cancelled, taken) and must stop. */
  started: Set<string>;
}

export interface FinishResult {
  /** Outcomes that won their conditional UPDATE. */
  recorded: Outcome[];
  /** Outcomes whose attempt was no longer running under that token (reaped, cancelled): not written. */
  rejected: Outcome[];
  /** New attempts created for `failed` outcomes, to be pushed. */
  retries: CreatedExecution[];
}

export interface StartResult {
  started: StartedExecution[];
  /** Started executions that were immediately recorded as skipped (overlap policy `forbid`). */
  skipped: {
    id: string;
    token: string;
    jobId: string;
    attempt: number;
    lane: Lane;
    trigger: Trigger;
    reason: string;
  }[];
  /** Ids that were not startable (cancelled, already taken, unknown): the claim must just be dropped. */
  notStarted: string[];
  /** Running executions that must be cancelled because a new one replaced them (overlap `replace`). */
  replaced: { id: string; jobId: string; attempt: number; workerId: string | null }[];
}

export interface WorkerStore extends FlowStore {
  /** Reads claimed executions that are still waiting, with their job's definition. No write. */
  executionsLoad(claims: Claim[]): Promise<{ loaded: StartedExecution[]; notStarted: string[] }>;
  /**
   * Starts executions whose job restricts overlap (`forbid`, `replace`) before they run, in a transaction that
   * serialises on the job row.
   */
  executionsStart(input: { workerId: string; leaseMs: number; claims: Claim[] }): Promise<StartResult>;
  /**
   * In one statement: writes start records (waiting -> running) and outcomes. An outcome is fenced: it is written
   * only while its attempt is running under the same token, or is still waiting with no start record at all (an
   * attempt that finished before its start record was flushed: its start and outcome are written together).
   */
  executionsRecord(input: {
    workerId: string;
    leaseMs: number;
    starts: StartRecord[];
    outcomes: Outcome[];
  }): Promise<RecordResult>;
  /** Extends the leases still held; returns the ids that are still running under these tokens. */
  executionsHeartbeat(input: { workerId: string; leaseMs: number; claims: Claim[] }): Promise<Set<string>>;
  /**
   * Stores what attempts printed that ended without an outcome of this worker's (cancelled, replaced, lease lost):
   * only into rows already final under the same token (or none) with no output yet. Returns the ids written.
   */
  executionsKeepOutput(items: { id: string; token: string; output: string }[]): Promise<Set<string>>;
  /** Puts attempts the worker gives up on during shutdown back to queued (conditional on token). */
  executionsRelease(claims: Claim[]): Promise<CreatedExecution[]>;
  /**
   * Registers the worker or refreshes its heartbeat. `newerRelease`: a newer release than the worker's own is
   * recorded and live workers of newer releases serve all of its lanes, so it should retire (null: keep working).
   */
  workerUpsert(info: WorkerInfo): Promise<{ newerRelease: string | null }>;
  workerRemove(id: string): Promise<void>;
}

/**
 * A suspect is an attempt whose earlier claim was never acknowledged: its worker was lost (it may be a poison job that
 * kills its worker). A worker claims one only when it has nothing in flight, and then nothing else until it ends, so a
 * poison job can take only itself down. `alone`: the one claim returned is a suspect. `turn`: a suspect waits in the
 * lane and this worker is the one to take it: it claims nothing more until it is idle (a claim of `count` 0 keeps
 * its turn meanwhile; a turn not kept lapses after `leaseMs`), then claims the lane `idle`.
 */
export type ClaimIsolation = 'alone' | 'turn' | null;

export interface ClaimRequest {
  lane: Lane;
  count: number;
  leaseMs: number;
  /** The claiming worker (whose turn it is to take a suspect); absent: an anonymous claim, never given a turn. */
  worker?: string;
  /** The worker has nothing in flight: it may take a suspect (alone). */
  idle?: boolean;
}

export interface ClaimResult {
  claims: Claim[];
  nextDueAt: Date | null;
  state: ClaimState;
  isolation: ClaimIsolation;
}

export interface WorkerQueue extends FlowQueue {
  /**
   * Leases up to `count` ready ids of the lane that may start under their jobs' limits (see flow.ts). `nextDueAt`: when
   * the next delayed id comes due or a rate window opens. `state`: `paused` (the lane starts nothing) or `restore`
   * (the queue lost its flow state: run restoreFlow, then claim again). Suspects (see ClaimIsolation) are claimed
   * only by an `idle` worker, alone.
   */
  claim(input: ClaimRequest): Promise<ClaimResult>;
  /**
   * Blocks until work may be ready in one of the lanes, or the timeout passes. Returns the lane whose push woke it
   * (only that lane need be claimed), or null after a timeout (claim every lane: delayed work may have come due).
   */
  waitForWork(lanes: readonly Lane[], timeoutMs: number): Promise<Lane | null>;
  /** Extends Redis leases held under these tokens (restoring ones lost to a flush); returns ids owned by others. */
  heartbeat(input: { lane: Lane; claims: Claim[]; leaseMs: number }): Promise<string[]>;
  /** Acknowledges finished claims, moves dead ones to the dead-letter list, pushes new items, atomically. */
  settle(input: { lane: Lane; acks: Claim[]; dead: string[]; push: QueueItem[] }): Promise<void>;
  push(items: readonly QueueItem[]): Promise<void>;
  /** Tells the workers running these executions to kill them (they were cancelled or replaced). */
  withdraw(items: readonly (QueueItem & { running: boolean })[]): Promise<void>;
}

/**
 * Receives what running attempts print, for readers while they run (GET /executions/{id}/output). Must never block
 * or throw: it buffers, and writes out in batches on its own schedule.
 */
export interface LiveOutputSink {
  append(executionId: string, chunk: Buffer): void;
  /** The attempt ended: what it printed is in its outcome from now on. */
  end(executionId: string): void;
}

/** One write of a running attempt's output: its id (a cursor, also the SSE event id) and its text. */
interface LiveOutputEntry {
  id: string;
  text: string;
}

/** Reads what running attempts printed so far (written by a LiveOutputSink). */
export interface LiveOutputReader {
  /** The writes after `afterId` (all when null), oldest first. */
  read(executionId: string, afterId: string | null): Promise<LiveOutputEntry[]>;
}

/** Runs one attempt. Must honour `cancel.signal` (kill the process group) and cap its output. */
export interface Runner {
  run(execution: StartedExecution, cancel: Cancellation): Promise<RunResult>;
}

export interface RunResult {
  ok: boolean;
  exitCode: number | null;
  output: string;
  error: string | null;
  /** A failure no retry can fix (an HTTP 4xx, a refused address): the attempt is dead whatever retries are left. */
  final?: boolean;
  /** The target asked to be retried no sooner than this (Retry-After); the retry policy caps it at the backoff max. */
  retryAfterMs?: number | null;
}
