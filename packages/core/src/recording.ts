/**
 * @module recording — the worker's write-behind of start records and outcomes (group commit).
 *
 * An attempt starts running as soon as it is claimed and read. Its start record (waiting -> running, with the lease
 * token) and, later, its outcome are queued here and written by one statement per flush, together with those of
 * every other attempt that started or finished meanwhile. When an attempt finishes before its start record went
 * out, both are written as one row change. The guarantees do not move: every write is a conditional UPDATE fenced
 * by the lease token, a start record that loses (the row was cancelled or taken) stops the attempt, and an attempt
 * whose worker dies before anything was written is redelivered by Redis (and counted, so a job that kills its
 * worker every time still ends dead).
 */
import type {
  Claim,
  Clock,
  Logger,
  Outcome,
  RecordResult,
  StartedExecution,
  TransitionSink,
  WorkerQueue,
  WorkerStore,
} from './ports';
import { createdTransition, outcomeTransition, startedTransition } from './transitions';
import type { Lane, Transition } from './types';

export interface RecordingCounts {
  succeeded: number;
  failed: number;
  dead: number;
  rejected: number;
}

interface Started {
  execution: StartedExecution;
  /** performance.now() when it started running. */
  startedAt: number;
  at: Date;
}

export interface RecorderDeps {
  store: Pick<WorkerStore, 'executionsRecord'>;
  queue: Pick<WorkerQueue, 'settle'>;
  clock: Clock;
  sink: TransitionSink;
  logger: Logger;
}

/** Most rows one flush statement carries. */
const MAX_BATCH = 1000;
/**
 * Statements in flight at once. One measured best on a 2-core machine (12.5k vs 11.7k jobs/s, 73 vs 79 ms of
 * worker CPU per 1,000 jobs): while it commits, the next batch grows, and fewer, larger statements cost the
 * worker less. The recorder supports more (e.g. for a high-latency link to the database).
 */
const MAX_WRITES = 1;

interface Pending {
  outcome: Outcome;
  started: Started;
  /** Its start record is known to be written (by an earlier write, or synchronously). */
  startRecorded: boolean;
}

export class Recorder {
  /** Running attempts whose start record is not written yet (and not in a write in flight). */
  private readonly unrecorded = new Map<string, Started>();
  /** Start records in a write in flight. */
  private readonly startsInFlight = new Map<string, Started>();
  /** Running attempts whose start record is written. */
  private readonly recorded = new Map<string, Started>();
  /** Outcomes waiting for a write, and outcomes in a write in flight. */
  private readonly outcomes = new Map<string, Pending>();
  private readonly outcomesInFlight = new Map<string, Pending>();
  /** Starts in a write in flight whose attempt ended without an outcome meanwhile. */
  private readonly forgotten = new Set<string>();
  private writes = 0;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private scheduled = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly deps: RecorderDeps,
    private readonly options: {
      workerId: string;
      leaseMs: number;
      counts: RecordingCounts;
      /** Called when a start record lost its race: the attempt must stop without recording anything. */
      onStartLost: (id: string) => void;
      /** Called after each write (slots for claiming may have opened). */
      onFlushed: () => void;
    },
  ) {}

  /** Outcomes not yet written; the worker stops claiming while too many pile up. */
  get backlog(): number {
    return this.outcomes.size + this.outcomesInFlight.size;
  }

  /** An attempt began running. `alreadyRecorded`: its start was written synchronously (overlap-restricted jobs). */
  started(execution: StartedExecution, alreadyRecorded: boolean): void {
    const started = { execution, startedAt: performance.now(), at: this.deps.clock.now() };
    if (alreadyRecorded) {
      this.recorded.set(execution.id, started);
      this.deps.sink.emit([startedTransition(execution, started.at, this.options.workerId)]);
    } else {
      this.unrecorded.set(execution.id, started);
      this.schedule();
    }
  }

  /** An attempt finished; its outcome will be written with the next flush. */
  finished(outcome: Outcome): void {
    const id = outcome.id;
    const recorded = this.recorded.get(id);
    const started = recorded ?? this.unrecorded.get(id) ?? this.startsInFlight.get(id);
    if (!started) return; // its start record lost its race: nothing of ours to write
    this.recorded.delete(id);
    this.unrecorded.delete(id);
    this.outcomes.set(id, { outcome, started, startRecorded: recorded !== undefined });
    this.schedule();
  }

  /** An attempt ended without an outcome of ours to write (cancelled, released): forget its start. */
  forget(id: string): void {
    this.recorded.delete(id);
    this.unrecorded.delete(id);
    if (this.startsInFlight.has(id)) this.forgotten.add(id);
  }

  /** Claims whose lease in PostgreSQL must be extended (start written, outcome maybe pending). */
  recordedClaims(): (Claim & { lane: Lane })[] {
    const claims: (Claim & { lane: Lane })[] = [];
    for (const s of this.recorded.values()) claims.push(claimOf(s.execution));
    for (const map of [this.outcomes, this.outcomesInFlight]) {
      for (const o of map.values()) if (o.startRecorded) claims.push(claimOf(o.outcome));
    }
    return claims;
  }

  /** Every claim this worker still holds in Redis (running or waiting to be written). */
  heldClaims(): (Claim & { lane: Lane })[] {
    const claims: (Claim & { lane: Lane })[] = [];
    for (const map of [this.recorded, this.unrecorded, this.startsInFlight]) {
      for (const s of map.values()) claims.push(claimOf(s.execution));
    }
    for (const map of [this.outcomes, this.outcomesInFlight])
      for (const o of map.values()) claims.push(claimOf(o.outcome));
    return claims;
  }

  /** Resolves once no write is in flight (what is queued may still be waiting). */
  async writesIdle(): Promise<void> {
    while (this.writes > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** Writes everything queued, retrying while the database is away; resolves when nothing is left. */
  async drain(): Promise<void> {
    while (this.writes > 0 || this.outcomes.size > 0 || this.unrecorded.size > 0) {
      this.schedule();
      await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
  }

  private get pendingWork(): boolean {
    return this.outcomes.size > 0 || this.unrecorded.size > 0;
  }

  private schedule(): void {
    if (this.scheduled || this.retryTimer) return;
    this.scheduled = true;
    // Let attempts starting or finishing in this turn of the event loop join the batch.
    setImmediate(() => {
      this.scheduled = false;
      while (this.writes < MAX_WRITES && this.pendingWork && !this.retryTimer) void this.writeOne();
    });
  }

  private async writeOne(): Promise<void> {
    const outcomes = takeInto(this.outcomes, this.outcomesInFlight, MAX_BATCH);
    const starts = takeInto(this.unrecorded, this.startsInFlight, MAX_BATCH);
    this.writes++;
    try {
      await this.write(starts, outcomes);
      this.failures = 0;
    } catch (error) {
      this.failures++;
      // Put the batch back: outcomes stay in memory (their leases keep being extended) until the database answers.
      for (const o of outcomes) if (!this.outcomes.has(o.outcome.id)) this.outcomes.set(o.outcome.id, o);
      for (const s of starts) {
        const id = s.execution.id;
        if (this.forgotten.delete(id)) continue;
        if (!this.outcomes.has(id) && !this.outcomesInFlight.has(id)) this.unrecorded.set(id, s);
      }
      this.deps.logger.warn({
        event: 'worker.record_failed',
        worker_id: this.options.workerId,
        outcomes: outcomes.length,
        starts: starts.length,
        failures: this.failures,
        err: String(error),
      });
      this.retryTimer ??= setTimeout(
        () => {
          this.retryTimer = null;
          this.schedule();
        },
        Math.min(5000, 100 * 2 ** Math.min(this.failures, 6)),
      );
    } finally {
      for (const o of outcomes) this.outcomesInFlight.delete(o.outcome.id);
      for (const s of starts) this.startsInFlight.delete(s.execution.id);
      this.writes--;
      if (this.writes === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const w of waiters) w();
      }
      this.options.onFlushed();
      if (this.pendingWork) this.schedule();
    }
  }

  private async write(starts: Started[], outcomes: Pending[]): Promise<void> {
    const now = performance.now();
    const result: RecordResult = await this.deps.store.executionsRecord({
      workerId: this.options.workerId,
      leaseMs: this.options.leaseMs,
      starts: starts.map((s) => ({
        id: s.execution.id,
        token: s.execution.token,
        elapsedMs: Math.round(now - s.startedAt),
        jobVersion: s.execution.jobVersion,
      })),
      outcomes: outcomes.map((o) => {
        o.outcome.startedAgoMs = Math.round(now - o.started.startedAt);
        return o.outcome;
      }),
    });
    const transitions: Transition[] = [];
    const logging = this.deps.sink.enabled !== false;
    for (const s of starts) {
      const id = s.execution.id;
      const won = result.started.has(id);
      if (this.forgotten.delete(id)) continue; // cancelled or released while the statement ran
      const pending = this.outcomes.get(id) ?? this.outcomesInFlight.get(id);
      if (pending) {
        // Finished while the statement ran: its outcome is fenced on its own, and now knows the start is written.
        if (won) {
          pending.startRecorded = true;
          if (logging) transitions.push(startedTransition(s.execution, s.at, this.options.workerId));
        }
      } else if (won) {
        this.recorded.set(id, s);
        if (logging) transitions.push(startedTransition(s.execution, s.at, this.options.workerId));
      } else {
        this.options.onStartLost(id);
      }
    }
    if (logging) {
      const recordedIds = new Set(result.recorded.map((o) => o.id));
      const at = this.deps.clock.now();
      for (const o of outcomes) {
        if (!recordedIds.has(o.outcome.id)) continue;
        if (!o.startRecorded && !result.started.has(o.outcome.id)) {
          transitions.push(startedTransition(o.started.execution, o.started.at, this.options.workerId));
        }
        transitions.push(outcomeTransition(o.outcome, at, this.options.workerId));
      }
      for (const retry of result.retries) transitions.push(createdTransition(retry, at, this.options.workerId));
    }
    if (transitions.length > 0) this.deps.sink.emit(transitions);
    for (const rejected of result.rejected) {
      this.deps.logger.warn({
        event: 'execution.outcome_rejected',
        execution_id: rejected.id,
        job_id: rejected.jobId,
        attempt: rejected.attempt,
        worker_id: this.options.workerId,
        outcome: rejected.status,
        reason: 'the attempt is no longer ours: cancelled, or reaped after its lease expired',
      });
    }
    const counts = this.options.counts;
    counts.rejected += result.rejected.length;
    for (const o of result.recorded) counts[o.status]++;
    // No longer held: drop them before the acknowledgement goes out, so a heartbeat built from here on cannot
    // restore (as "lost to a flush") the leases this settle removes.
    for (const o of outcomes) this.outcomesInFlight.delete(o.outcome.id);
    await settle(
      this.deps,
      outcomes.map((o) => o.outcome),
      result,
      this.options.workerId,
    );
  }
}

function claimOf(x: { id: string; token: string; lane: Lane }): Claim & { lane: Lane } {
  return { id: x.id, token: x.token, lane: x.lane };
}

/** Moves up to `max` entries from one map to another and returns them. */
function takeInto<T>(from: Map<string, T>, to: Map<string, T>, max: number): T[] {
  const out: T[] = [];
  for (const [id, value] of from) {
    if (out.length >= max) break;
    out.push(value);
    to.set(id, value);
    from.delete(id); // deleting the entry being visited is safe while iterating a Map
  }
  return out;
}

/**
 * Tells Redis what PostgreSQL now says: finished claims are acknowledged, dead ones dead-lettered, retries pushed.
 * A failure here loses nothing: leases expire and the reconciler pushes what Redis is missing.
 */
export async function settle(
  deps: { queue: Pick<WorkerQueue, 'settle'>; logger: Logger },
  outcomes: Outcome[],
  result: Pick<RecordResult, 'recorded' | 'retries'>,
  workerId: string | null,
): Promise<void> {
  const lanes = new Set<Lane>([...outcomes.map((o) => o.lane), ...result.retries.map((r) => r.lane)]);
  for (const lane of lanes) {
    try {
      await deps.queue.settle({
        lane,
        acks: outcomes.filter((o) => o.lane === lane),
        dead: result.recorded.filter((o) => o.lane === lane && o.status === 'dead').map((o) => o.id),
        push: result.retries.filter((r) => r.lane === lane),
      });
    } catch (error) {
      deps.logger.warn({ event: 'worker.settle_failed', worker_id: workerId, lane, err: String(error) });
    }
  }
}
