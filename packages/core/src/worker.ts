/**
 * @module worker — the worker loop: claim from Redis, start in PostgreSQL, run, record outcomes in batches.
 *
 * Throughput comes from batching, never from weakening a guarantee: one claim call takes many ids, one UPDATE
 * starts them all, and finished attempts are recorded together by one conditional UPDATE (fenced by each lease
 * token) while the next ones already run. A slot is freed as soon as its attempt finishes; the number of outcomes
 * waiting to be recorded is bounded, so a slow or unreachable database stops claiming instead of piling up work.
 */
import type {
  Claim,
  Clock,
  Logger,
  Outcome,
  Runner,
  StartedExecution,
  TransitionSink,
  WorkerQueue,
  WorkerStore,
} from './ports';
import { hasRetriesLeft, retryDelayMs } from './retry';
import { createdTransition, outcomeTransition, startedTransition, transition, waitingStatus } from './transitions';
import type { Lane, Transition, WorkerKind } from './types';

export interface WorkerOptions {
  id: string;
  kind: WorkerKind;
  host: string;
  version: string;
  lanes: Lane[];
  concurrency: number;
  leaseMs: number;
  /** How often leases and the worker row are refreshed; default leaseMs / 3. */
  heartbeatMs?: number;
  /** Longest a claim loop blocks waiting for work before looking again. */
  pollMs?: number;
  /** Ids claimed per Redis call. */
  claimBatch?: number;
  /** Extra time given to a runner after its timeout fired before the attempt is recorded as timed out anyway. */
  killGraceMs?: number;
}

export interface WorkerDeps {
  store: WorkerStore;
  queue: WorkerQueue;
  runner: Runner;
  clock: Clock;
  sink: TransitionSink;
  logger: Logger;
  random?: () => number;
}

export interface DrainOptions {
  /** Checked before every claim: return false to stop claiming (e.g. a Lambda's remaining time ran low). */
  mayClaim?: () => boolean;
  /** Stop once no work has been seen for this long. */
  idleExitMs?: number;
}

export interface WorkerCounts {
  claimed: number;
  started: number;
  succeeded: number;
  failed: number;
  dead: number;
  rejected: number;
  skipped: number;
  released: number;
}

interface InFlight {
  execution: StartedExecution;
  controller: AbortController;
  startedAt: number;
}

const CANCELLED = 'cancelled';
const TIMEOUT = 'timeout';

export class Worker {
  readonly id: string;
  readonly counts: WorkerCounts = { claimed: 0, started: 0, succeeded: 0, failed: 0, dead: 0, rejected: 0, skipped: 0, released: 0 };
  private readonly options: Required<WorkerOptions>;
  private readonly random: () => number;
  /** Claimed in Redis, not yet started or dropped: counts against concurrency. */
  private reserved = 0;
  private readonly running = new Map<string, InFlight>();
  /** Outcomes waiting to be recorded, by execution id; their leases are still heartbeated. */
  private readonly pending = new Map<string, Outcome>();
  private flushing: Promise<void> | null = null;
  private stopping = false;
  private slotWaiters: (() => void)[] = [];
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private loop: Promise<void> | null = null;
  private readonly startedAt: Date;

  constructor(private readonly deps: WorkerDeps, options: WorkerOptions) {
    this.options = {
      heartbeatMs: Math.max(100, Math.floor(options.leaseMs / 3)),
      pollMs: 1000,
      claimBatch: 100,
      killGraceMs: 2000,
      ...options,
    };
    this.id = options.id;
    this.random = deps.random ?? Math.random;
    this.startedAt = deps.clock.now();
  }

  get inFlight(): number {
    return this.running.size + this.reserved;
  }

  /** Registers the worker and starts claiming until stop() (or until `drain` options say to stop). */
  async start(drain: DrainOptions = {}): Promise<void> {
    await this.register();
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.options.heartbeatMs);
    this.heartbeatTimer.unref?.();
    this.loop = this.claimLoop(drain);
  }

  /** Runs until the drain conditions end it, then shuts down cleanly; the Lambda worker's whole life. */
  async drain(drain: DrainOptions): Promise<WorkerCounts> {
    await this.start(drain);
    await this.loop;
    await this.stop({ graceMs: Number.POSITIVE_INFINITY });
    return this.counts;
  }

  /**
   * Stops claiming, lets in-flight attempts finish within `graceMs`, releases the rest back to the queue,
   * records every outcome, and deregisters.
   */
  async stop({ graceMs }: { graceMs: number }): Promise<void> {
    this.stopping = true;
    this.wakeSlotWaiters();
    await this.loop;
    const deadline = Date.now() + graceMs;
    while (this.running.size > 0 && Date.now() < deadline) {
      await this.waitForSlot(Math.min(200, Math.max(1, deadline - Date.now())));
    }
    if (this.running.size > 0) await this.releaseRunning();
    await this.flushUntilEmpty();
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
    try {
      await this.deps.store.workerRemove(this.id);
    } catch (error) {
      this.deps.logger.warn({ event: 'worker.deregister_failed', worker_id: this.id, err: String(error) });
    }
  }

  /** Aborts one running attempt (a cancel request); its outcome is not recorded since the row is already cancelled. */
  cancel(executionId: string): boolean {
    const inFlight = this.running.get(executionId);
    if (!inFlight) return false;
    inFlight.controller.abort(CANCELLED);
    return true;
  }

  // ---------------------------------------------------------------- claiming

  private async claimLoop(drain: DrainOptions): Promise<void> {
    const { lanes, concurrency, claimBatch, leaseMs, pollMs } = this.options;
    let idleSince = Date.now();
    let laneIndex = 0;
    while (!this.stopping) {
      const free = concurrency - this.inFlight;
      if (free <= 0 || this.pending.size >= concurrency * 4 + claimBatch) {
        await this.waitForSlot(pollMs);
        continue;
      }
      if (drain.mayClaim && !drain.mayClaim()) break;
      let claimedAny = false;
      let nextDueAt: Date | null = null;
      for (let i = 0; i < lanes.length && !claimedAny; i++) {
        const lane = lanes[(laneIndex + i) % lanes.length]!;
        let result;
        try {
          result = await this.deps.queue.claim({ lane, count: Math.min(free, claimBatch), leaseMs });
        } catch (error) {
          this.deps.logger.warn({ event: 'worker.claim_failed', worker_id: this.id, lane, err: String(error) });
          await sleep(Math.min(pollMs, 1000));
          break;
        }
        if (result.nextDueAt && (!nextDueAt || result.nextDueAt < nextDueAt)) nextDueAt = result.nextDueAt;
        if (result.claims.length > 0) {
          claimedAny = true;
          this.counts.claimed += result.claims.length;
          this.reserved += result.claims.length;
          void this.startClaims(lane, result.claims);
        }
      }
      laneIndex++;
      if (claimedAny) {
        idleSince = Date.now();
        continue;
      }
      if (drain.idleExitMs !== undefined && Date.now() - idleSince >= drain.idleExitMs) break;
      let waitMs = pollMs;
      if (nextDueAt) waitMs = Math.max(0, Math.min(waitMs, nextDueAt.getTime() - Date.now()));
      if (drain.idleExitMs !== undefined) waitMs = Math.min(waitMs, Math.max(1, drain.idleExitMs));
      if (waitMs > 0) {
        try {
          await this.deps.queue.waitForWork(lanes, waitMs);
        } catch (error) {
          this.deps.logger.warn({ event: 'worker.wait_failed', worker_id: this.id, err: String(error) });
          await sleep(Math.min(pollMs, 1000));
        }
      }
    }
  }

  private async startClaims(lane: Lane, claims: Claim[]): Promise<void> {
    let result;
    try {
      result = await this.deps.store.executionsStart({ workerId: this.id, leaseMs: this.options.leaseMs, claims });
    } catch (error) {
      // Nothing was started; the Redis leases expire and the ids go back to the queue (reaper + reconciler).
      this.reserved -= claims.length;
      this.wakeSlotWaiters();
      this.deps.logger.warn({ event: 'worker.start_failed', worker_id: this.id, count: claims.length, err: String(error) });
      return;
    }
    this.reserved -= claims.length;
    const now = this.deps.clock.now();
    const transitions: Transition[] = [];
    const drop = new Set<string>([...result.notStarted]);
    for (const skipped of result.skipped) {
      drop.add(skipped.id);
      this.counts.skipped++;
      transitions.push(
        transition({
          jobId: skipped.jobId,
          executionId: skipped.id,
          attempt: skipped.attempt,
          from: waitingStatus(skipped.trigger),
          to: 'skipped',
          workerId: this.id,
          at: now,
          error: skipped.reason,
        }),
      );
    }
    for (const started of result.started) {
      this.counts.started++;
      transitions.push(startedTransition(started, now, this.id));
    }
    if (transitions.length > 0) this.deps.sink.emit(transitions);
    if (drop.size > 0) {
      const acks = claims.filter((c) => drop.has(c.id));
      this.deps.queue.settle({ lane, acks, dead: [], push: [] }).catch((error) => {
        this.deps.logger.warn({ event: 'worker.ack_failed', worker_id: this.id, err: String(error) });
      });
    }
    for (const started of result.started) void this.runOne(started);
    this.wakeSlotWaiters();
  }

  // ---------------------------------------------------------------- running

  private async runOne(execution: StartedExecution): Promise<void> {
    const controller = new AbortController();
    const inFlight: InFlight = { execution, controller, startedAt: performance.now() };
    this.running.set(execution.id, inFlight);
    const timer = setTimeout(() => controller.abort(TIMEOUT), execution.timeoutMs);
    let result;
    try {
      result = await this.runWithGrace(execution, controller);
    } catch (error) {
      result = { ok: false, exitCode: null, output: '', error: `runner error: ${errorMessage(error)}` };
    } finally {
      clearTimeout(timer);
    }
    this.running.delete(execution.id);
    const durationMs = Math.round(performance.now() - inFlight.startedAt);
    const reason = controller.signal.aborted ? controller.signal.reason : null;
    if (reason === CANCELLED || reason === RELEASED) {
      // The row was cancelled (or is being released) by someone else; there is nothing of ours to record.
      this.deps.queue.settle({ lane: execution.lane, acks: [execution], dead: [], push: [] }).catch(() => undefined);
    } else {
      const ok = result.ok && reason !== TIMEOUT;
      const error = reason === TIMEOUT ? `timed out after ${execution.timeoutMs} ms` : result.error;
      this.pending.set(execution.id, this.toOutcome(execution, { ...result, ok, error }, durationMs));
      this.scheduleFlush();
    }
    this.wakeSlotWaiters();
  }

  private runWithGrace(execution: StartedExecution, controller: AbortController) {
    const run = this.deps.runner.run(execution, controller.signal);
    // A handler that ignores its abort signal must not hold a slot forever.
    const grace = new Promise<never>((_, reject) => {
      const onAbort = () => {
        const t = setTimeout(() => reject(new Error('attempt did not stop after abort')), this.options.killGraceMs);
        void run.finally(() => clearTimeout(t));
      };
      if (controller.signal.aborted) onAbort();
      else controller.signal.addEventListener('abort', onAbort, { once: true });
    });
    return Promise.race([run, grace]);
  }

  private toOutcome(
    execution: StartedExecution,
    result: { ok: boolean; exitCode: number | null; output: string; error: string | null },
    durationMs: number,
  ): Outcome {
    const retry = !result.ok && hasRetriesLeft(execution.attempt, execution.maxRetries);
    return {
      id: execution.id,
      token: execution.token,
      jobId: execution.jobId,
      attempt: execution.attempt,
      lane: execution.lane,
      priority: execution.priority,
      status: result.ok ? 'succeeded' : retry ? 'failed' : 'dead',
      exitCode: result.exitCode,
      output: result.output,
      error: result.ok ? null : result.error ?? 'failed',
      durationMs,
      retryDelayMs: retry ? retryDelayMs(execution.backoff, execution.attempt, this.random) : null,
    };
  }

  // ---------------------------------------------------------------- recording

  private scheduleFlush(): void {
    if (this.flushing) return;
    this.flushing = this.flushLoop().finally(() => {
      this.flushing = null;
    });
  }

  /** Records pending outcomes batch after batch until none are left; backs off while the database is away. */
  private async flushLoop(): Promise<void> {
    let failures = 0;
    while (this.pending.size > 0) {
      // Let attempts finishing in the same turn join the batch.
      await new Promise((resolve) => setImmediate(resolve));
      const batch = [...this.pending.values()].slice(0, 1000);
      try {
        await recordOutcomes(this.deps, batch, this.id, this.counts);
        failures = 0;
        for (const outcome of batch) this.pending.delete(outcome.id);
      } catch (error) {
        failures++;
        this.deps.logger.warn({
          event: 'worker.record_failed',
          worker_id: this.id,
          count: batch.length,
          failures,
          err: String(error),
        });
        await sleep(Math.min(5000, 100 * 2 ** Math.min(failures, 6)));
      }
      this.wakeSlotWaiters();
    }
  }

  private async flushUntilEmpty(): Promise<void> {
    while (this.pending.size > 0 || this.flushing) {
      if (!this.flushing) this.scheduleFlush();
      await this.flushing;
    }
  }

  /** Gives running attempts back to the queue as the same attempt (used when the grace period ends). */
  private async releaseRunning(): Promise<void> {
    const inFlight = [...this.running.values()];
    for (const f of inFlight) f.controller.abort(RELEASED);
    const claims = inFlight.map((f) => ({ id: f.execution.id, token: f.execution.token }));
    try {
      const released = await this.deps.store.executionsRelease(claims);
      this.counts.released += released.length;
      const now = this.deps.clock.now();
      this.deps.sink.emit(
        released.map((r) => ({ ...createdTransition(r, now, this.id), from: 'running' as const, error: 'released at shutdown' })),
      );
      await this.deps.queue.push(released);
    } catch (error) {
      // The leases expire and the reaper makes new attempts of them.
      this.deps.logger.warn({ event: 'worker.release_failed', worker_id: this.id, err: String(error) });
    }
  }

  // ---------------------------------------------------------------- liveness

  private async register(): Promise<void> {
    await this.deps.store.workerUpsert(this.info());
  }

  private info() {
    return {
      id: this.id,
      kind: this.options.kind,
      host: this.options.host,
      startedAt: this.startedAt,
      lastHeartbeatAt: this.deps.clock.now(),
      concurrency: this.options.concurrency,
      inFlight: this.inFlight,
      version: this.options.version,
      lanes: this.options.lanes,
    };
  }

  /** Extends every lease this worker holds (running or waiting to be recorded) and aborts attempts it lost. */
  async heartbeat(): Promise<void> {
    const held = [
      ...[...this.running.values()].map((f) => f.execution),
      ...[...this.pending.values()],
    ];
    try {
      await this.deps.store.workerUpsert(this.info());
      if (held.length === 0) return;
      const claims = held.map((h) => ({ id: h.id, token: h.token }));
      const still = await this.deps.store.executionsHeartbeat({ workerId: this.id, leaseMs: this.options.leaseMs, claims });
      const asked = new Set(claims.map((c) => c.id));
      for (const [id, f] of this.running) {
        if (asked.has(id) && !still.has(id)) {
          this.deps.logger.warn({ event: 'execution.lease_lost', execution_id: id, job_id: f.execution.jobId, worker_id: this.id });
          f.controller.abort(CANCELLED);
        }
      }
      const byLane = new Map<Lane, Claim[]>();
      for (const h of held) {
        if (!still.has(h.id)) continue;
        const list = byLane.get(h.lane) ?? [];
        list.push({ id: h.id, token: h.token });
        byLane.set(h.lane, list);
      }
      for (const [lane, laneClaims] of byLane) {
        await this.deps.queue.heartbeat({ lane, claims: laneClaims, leaseMs: this.options.leaseMs });
      }
    } catch (error) {
      this.deps.logger.warn({ event: 'worker.heartbeat_failed', worker_id: this.id, err: String(error) });
    }
  }

  // ---------------------------------------------------------------- helpers

  private waitForSlot(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      this.slotWaiters.push(done);
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }

  private wakeSlotWaiters(): void {
    const waiters = this.slotWaiters;
    this.slotWaiters = [];
    for (const w of waiters) w();
  }
}

const RELEASED = 'released';

/**
 * Records a batch of outcomes in one statement, then settles them in Redis (ack, dead-letter, push retries).
 * Shared by the worker and the reaper so both follow the same fencing rule.
 */
export async function recordOutcomes(
  deps: Pick<WorkerDeps, 'sink' | 'logger' | 'clock'> & {
    store: Pick<WorkerStore, 'executionsFinish'>;
    queue: Pick<WorkerQueue, 'settle'>;
  },
  outcomes: Outcome[],
  workerId: string | null,
  counts?: WorkerCounts,
): Promise<void> {
  const result = await deps.store.executionsFinish(outcomes);
  const now = deps.clock.now();
  const transitions: Transition[] = result.recorded.map((o) => outcomeTransition(o, now, workerId));
  for (const retry of result.retries) transitions.push(createdTransition(retry, now, workerId));
  deps.sink.emit(transitions);
  for (const rejected of result.rejected) {
    deps.logger.warn({
      event: 'execution.outcome_rejected',
      execution_id: rejected.id,
      job_id: rejected.jobId,
      attempt: rejected.attempt,
      worker_id: workerId,
      outcome: rejected.status,
      reason: 'the attempt is no longer running under this lease (reaped after its lease expired, or cancelled)',
    });
  }
  if (counts) {
    counts.rejected += result.rejected.length;
    for (const o of result.recorded) counts[o.status]++;
  }
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
      // PostgreSQL has the outcome; Redis catches up through lease expiry and the reconciler.
      deps.logger.warn({ event: 'worker.settle_failed', worker_id: workerId, lane, err: String(error) });
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
