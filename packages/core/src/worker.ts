/**
 * @module worker — the worker loop: claim ids from Redis, read them, run them, record starts and outcomes.
 *
 * Throughput comes from batching, never from weakening a guarantee: one claim call takes many ids, one read loads
 * them with their job, and starts and outcomes are written together by the recorder (see recording.ts), fenced by
 * each attempt's lease token. A slot is freed as soon as its attempt finishes; the number of outcomes waiting to be
 * written is bounded, so a slow or unreachable database stops claiming instead of piling up work.
 */
import { LazyAbort } from './cancellation';
import { flowTag, restoreFlow } from './flow';
import { toOutcome } from './outcome';
import type {
  Claim,
  Clock,
  Logger,
  Runner,
  RunResult,
  StartedExecution,
  TransitionSink,
  WorkerQueue,
  WorkerStore,
} from './ports';
import { Recorder } from './recording';
import { startStrictly } from './strict-start';
import { createdTransition } from './transitions';
import type { Lane, WorkerKind } from './types';

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
  /**
   * The deploy's release this worker runs (RELEASE_ID). When its heartbeat learns that a newer release is recorded
   * and that release's workers serve its lanes, the worker retires: it stops claiming, lets what it runs finish with
   * no deadline (a later stop() may set one), and deregisters. Null: it never retires for a release.
   */
  release?: string | null;
  /** Told once when the worker retires for `release` (the newer one), with the promise of its end. */
  onSuperseded?: (release: string, stopped: Promise<void>) => void;
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
  /**
   * Do not stop for idleness while a lane's next delayed id is due before this instant (epoch ms): wait for it
   * instead. A worker Lambda woken for a fire time a few seconds away must not return just before it comes due. A
   * fixed instant, not a window from now: a window moves with every loop, so a job due every minute would keep the
   * worker waiting until its time runs out.
   */
  waitForDueBefore?: number;
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

interface Running {
  execution: StartedExecution;
  abort: LazyAbort;
  /** performance.now() at start, and when its timeout passes. */
  startedAt: number;
  deadline: number;
}

const CANCELLED = 'cancelled';
const TIMEOUT = 'timeout';
const RELEASED = 'released';
/** The longest a claim for only a few free slots waits for more slots to free up. */
const CLAIM_DEFER_MS = 2;
/**
 * The share of the slots that must be free before a claim goes out at once (fewer: it waits, see claimLoop). Half:
 * under `npm run bench -- --only=http` 42 claims and reads per 1,000 jobs instead of 79 (a quarter, waiting for the
 * next free slot only), worker CPU 0.9x; the no-op drain no slower.
 */
const CLAIM_MIN_SHARE = 0.5;
/**
 * While another lane keeps the worker busy, a lane whose last claim came back empty is asked again only after this
 * long: an empty claim per full one would cost the busy lane a Redis round trip each time. New work in the idle
 * lane therefore waits at most this long under load (without load the worker waits on the markers and wakes at once).
 */
const EMPTY_LANE_RECHECK_MS = 20;
/** Timeouts are enforced to within this (one sweep for every running attempt). */
const TIMEOUT_SWEEP_MS = 50;
/** How many lease periods a worker keeps its Redis leases alive while PostgreSQL does not answer it. */
const OUTAGE_VOUCH_LEASES = 10;
/** Least time between two flow restores by one worker (a restore that did not help is not repeated in a loop). */
const RESTORE_MIN_INTERVAL_MS = 250;

export class Worker {
  readonly id: string;
  readonly counts: WorkerCounts = {
    claimed: 0,
    started: 0,
    succeeded: 0,
    failed: 0,
    dead: 0,
    rejected: 0,
    skipped: 0,
    released: 0,
  };
  private readonly options: Required<WorkerOptions>;
  private readonly random: () => number;
  private readonly recorder: Recorder;
  /** Claimed in Redis, not yet running or dropped: counts against concurrency. */
  private reserved = 0;
  private readonly running = new Map<string, Running>();
  private stopping = false;
  private stopped: Promise<void> | null = null;
  private stopDeadline = Number.POSITIVE_INFINITY;
  private slotWaiters: { free: number; wake: () => void }[] = [];
  private heartbeatTimer: NodeJS.Timeout | null = null;
  /** The timer's heartbeat in flight: its upsert would register the worker again after it deregistered. */
  private beating: Promise<void> | null = null;
  private timeoutTimer: NodeJS.Timeout | null = null;
  private loop: Promise<void> | null = null;
  private readonly startedAt: Date;
  /** When PostgreSQL last answered a heartbeat. */
  private databaseSeenAt = Date.now();
  private lastRestoreAt = 0;
  /** The newer release this worker retired for (null: it has not). */
  private supersededByRelease: string | null = null;
  /** A suspect (see ClaimIsolation) claimed alone is in flight: nothing else is claimed until it ends. */
  private suspectRunning = false;
  /** The lane whose suspect this worker is to take: it claims nothing until it is idle, then claims that lane. */
  private suspectTurn: Lane | null = null;
  /** When the turn was last kept (performance.now()). */
  private turnKeptAt = 0;

  constructor(
    private readonly deps: WorkerDeps,
    options: WorkerOptions,
  ) {
    this.options = {
      heartbeatMs: Math.max(100, Math.floor(options.leaseMs / 3)),
      pollMs: 1000,
      claimBatch: Math.max(1, Math.min(200, options.concurrency)),
      killGraceMs: 2000,
      ...options,
      release: options.release ?? null,
      onSuperseded: options.onSuperseded ?? (() => undefined),
    };
    this.id = options.id;
    this.random = deps.random ?? Math.random;
    this.startedAt = deps.clock.now();
    this.recorder = new Recorder(deps, {
      workerId: this.id,
      leaseMs: this.options.leaseMs,
      counts: this.counts,
      onStartLost: (id) => this.running.get(id)?.abort.abort(CANCELLED),
      onFlushed: () => this.wakeSlotWaiters(),
    });
  }

  get inFlight(): number {
    return this.running.size + this.reserved;
  }

  /** The newer release this worker retired for; null while it has not. */
  get supersededBy(): string | null {
    return this.supersededByRelease;
  }

  /** Registers the worker and starts claiming until stop() (or until `drain` options say to stop). */
  async start(drain: DrainOptions = {}): Promise<void> {
    const registered = await this.deps.store.workerUpsert(this.info());
    this.heartbeatTimer = setInterval(() => {
      this.beating = this.heartbeat();
    }, this.options.heartbeatMs);
    this.heartbeatTimer.unref?.();
    this.timeoutTimer = setInterval(() => this.sweepTimeouts(), TIMEOUT_SWEEP_MS);
    this.timeoutTimer.unref?.();
    this.loop = this.claimLoop(drain);
    this.noteRelease(registered.newerRelease);
  }

  /** Runs until the drain conditions end it, then shuts down cleanly; the Lambda worker's whole life. */
  async drain(drain: DrainOptions): Promise<WorkerCounts> {
    await this.start(drain);
    await this.loop;
    await this.stop({ graceMs: Number.POSITIVE_INFINITY });
    return this.counts;
  }

  /**
   * Stops claiming, lets running attempts finish within `graceMs`, gives the rest back to the queue, writes every
   * pending record, and deregisters.
   */
  stop({ graceMs }: { graceMs: number }): Promise<void> {
    // One shutdown per worker: a second call (the Lambda's last-resort timer while the drain winds down) only
    // shortens the grace and waits for the same end, so no caller returns while a release is still in flight.
    this.stopping = true;
    this.stopDeadline = Math.min(this.stopDeadline, Date.now() + graceMs);
    this.wakeSlotWaiters();
    this.stopped ??= this.shutDown();
    return this.stopped;
  }

  private async shutDown(): Promise<void> {
    await this.loop;
    while ((this.running.size > 0 || this.reserved > 0) && Date.now() < this.stopDeadline) {
      await this.waitForSlot(Math.min(200, Math.max(1, this.stopDeadline - Date.now())));
    }
    if (this.running.size > 0) await this.releaseRunning();
    await this.recorder.drain();
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.timeoutTimer) clearInterval(this.timeoutTimer);
    this.heartbeatTimer = null;
    this.timeoutTimer = null;
    await this.beating;
    try {
      await this.deps.store.workerRemove(this.id);
    } catch (error) {
      this.deps.logger.warn({ event: 'worker.deregister_failed', worker_id: this.id, err: String(error) });
    }
  }

  /** Kills one running attempt (it was cancelled or replaced); nothing of it is recorded by this worker. */
  cancel(executionId: string): boolean {
    const running = this.running.get(executionId);
    if (!running) return false;
    running.abort.abort(CANCELLED);
    return true;
  }

  // ---------------------------------------------------------------- claiming

  private async claimLoop(drain: DrainOptions): Promise<void> {
    const { lanes, concurrency, claimBatch, leaseMs, pollMs } = this.options;
    let idleSince = Date.now();
    let laneIndex = 0;
    // While slots are few, claiming waits until this instant (performance.now()) for more of them to free.
    let deferUntil: number | null = null;
    // The lane whose push woke the last wait: only it has new ready work (the others' markers are still set if
    // they have any, so the next wait returns at once for them).
    let hint: Lane | null = null;
    // Each lane's next delayed due time as its last claim reported it: the wait ends in time for the earliest.
    const nextDue = new Map<Lane, number>();
    // When each lane's last claim came back empty (absent: it returned work, or has not been asked yet).
    const emptyAt = new Map<Lane, number>();
    while (!this.stopping) {
      if (this.suspectRunning || this.suspectTurn) {
        if (this.inFlight > 0) {
          await this.keepTurn();
          await this.waitForSlot(this.turnKeepMs());
          continue;
        }
        this.suspectRunning = false;
        if (this.suspectTurn) hint = this.suspectTurn;
        this.suspectTurn = null;
      }
      const free = concurrency - this.inFlight;
      if (free <= 0 || this.recorder.backlog >= Math.max(2000, concurrency * 4)) {
        await this.waitForSlot(pollMs);
        continue;
      }
      // While work is in flight and only a few slots are free, give other attempts a moment to finish: a claim and
      // a read per few freed slots would spend the worker's CPU on round trips instead of jobs. Briefly (at most
      // CLAIM_DEFER_MS from the first slot that waited), so a free slot never stays idle long while work waits.
      const threshold = Math.min(claimBatch, Math.ceil(concurrency * CLAIM_MIN_SHARE));
      if (this.inFlight > 0 && free < threshold) {
        const now = performance.now();
        deferUntil ??= now + CLAIM_DEFER_MS;
        if (now < deferUntil) {
          await this.waitForSlot(deferUntil - now, threshold);
          continue;
        }
      }
      deferUntil = null;
      if (drain.mayClaim && !drain.mayClaim()) break;
      let claimedAny = false;
      // A claim that got fewer ids than it asked for emptied its lane's ready set: claiming again at once would be
      // an empty round trip. Only a full claim means more may be waiting; otherwise the lanes not yet asked are
      // tried, then the worker waits for the marker (set by every push into a ready set, so no wake-up is missed).
      let mayHaveMore = false;
      const now = Date.now();
      const rotation = lanes.map((_, i) => lanes[(laneIndex + i) % lanes.length]!);
      const worthAsking = rotation.filter(
        (l) => now - (emptyAt.get(l) ?? -Infinity) >= EMPTY_LANE_RECHECK_MS || (nextDue.get(l) ?? Infinity) <= now,
      );
      const order = hint ? [hint] : worthAsking.length > 0 ? worthAsking : rotation;
      hint = null;
      let restore = false;
      for (const lane of order) {
        if (mayHaveMore) break;
        const count = Math.min(concurrency - this.inFlight, claimBatch);
        if (count <= 0) break;
        let result;
        try {
          result = await this.deps.queue.claim({ lane, count, leaseMs, worker: this.id, idle: this.inFlight === 0 });
        } catch (error) {
          this.deps.logger.warn({ event: 'worker.claim_failed', worker_id: this.id, lane, err: String(error) });
          await sleep(Math.min(pollMs, 1000));
          break;
        }
        // The flow state is lost (nothing was claimed), or limits of some job are unknown (claims went on): restore.
        if (result.state === 'restore') restore = true;
        if (result.nextDueAt) nextDue.set(lane, result.nextDueAt.getTime());
        else nextDue.delete(lane);
        if (result.claims.length === 0) emptyAt.set(lane, Date.now());
        else emptyAt.delete(lane);
        if (result.claims.length > 0) {
          claimedAny = true;
          mayHaveMore = result.claims.length === count;
          this.counts.claimed += result.claims.length;
          this.reserved += result.claims.length;
          void this.startClaims(lane, result.claims);
        }
        if (result.isolation) {
          this.noteIsolation(lane, result.isolation, result.claims);
          break;
        }
        if (restore) break;
      }
      laneIndex++;
      if (restore) {
        await this.restoreFlow();
        continue;
      }
      if (claimedAny) idleSince = Date.now();
      if (mayHaveMore || (claimedAny && this.stopping) || this.suspectRunning || this.suspectTurn) continue;
      let waitMs = pollMs;
      let dueSoon = false;
      for (const due of nextDue.values()) {
        waitMs = Math.max(0, Math.min(waitMs, due - Date.now()));
        if (drain.waitForDueBefore !== undefined && due <= drain.waitForDueBefore) dueSoon = true;
      }
      if (drain.idleExitMs !== undefined && Date.now() - idleSince >= drain.idleExitMs && !dueSoon) break;
      if (drain.idleExitMs !== undefined) waitMs = Math.min(waitMs, Math.max(1, drain.idleExitMs));
      if (waitMs > 0) {
        try {
          hint = await this.deps.queue.waitForWork(lanes, waitMs);
        } catch (error) {
          this.deps.logger.warn({ event: 'worker.wait_failed', worker_id: this.id, err: String(error) });
          await sleep(Math.min(pollMs, 1000));
        }
      }
    }
  }

  /** A claim took a suspect alone, or gave this worker the turn to take one: it claims nothing until that ends. */
  private noteIsolation(lane: Lane, isolation: 'alone' | 'turn', claims: Claim[]): void {
    if (isolation === 'alone') this.suspectRunning = true;
    else {
      this.suspectTurn = lane;
      this.turnKeptAt = performance.now();
    }
    this.deps.logger.info({
      event: isolation === 'alone' ? 'worker.suspect_claimed' : 'worker.suspect_turn',
      worker_id: this.id,
      lane,
      in_flight: this.inFlight,
      ...(isolation === 'alone' ? { execution_id: claims[0]?.id } : {}),
    });
  }

  /** How often a worker emptying itself for a suspect keeps its turn (which lapses after a lease). */
  private turnKeepMs(): number {
    return Math.max(50, Math.min(this.options.pollMs, Math.floor(this.options.leaseMs / 3)));
  }

  /** Keeps this worker's turn to take a suspect while it empties itself; a turn lost lets it claim again at once. */
  private async keepTurn(): Promise<void> {
    const lane = this.suspectTurn;
    if (!lane || performance.now() - this.turnKeptAt < this.turnKeepMs()) return;
    this.turnKeptAt = performance.now();
    try {
      const { isolation } = await this.deps.queue.claim({
        lane,
        count: 0,
        leaseMs: this.options.leaseMs,
        worker: this.id,
      });
      if (isolation !== 'turn' && this.suspectTurn === lane) this.suspectTurn = null;
    } catch (error) {
      this.deps.logger.warn({ event: 'worker.claim_failed', worker_id: this.id, lane, err: String(error) });
    }
  }

  /** The queue lost its flow state (a fresh or flushed Redis): rebuild it from PostgreSQL, then claim again. */
  private async restoreFlow(): Promise<void> {
    const wait = this.lastRestoreAt + RESTORE_MIN_INTERVAL_MS - Date.now();
    if (wait > 0) await sleep(wait);
    this.lastRestoreAt = Date.now();
    try {
      await restoreFlow(this.deps);
    } catch (error) {
      this.deps.logger.warn({ event: 'worker.flow_restore_failed', worker_id: this.id, err: String(error) });
      await sleep(Math.min(this.options.pollMs, 1000));
    }
  }

  /** Reads the claimed rows; jobs that allow overlap run at once, the others start through the job's lock first. */
  private async startClaims(lane: Lane, claims: Claim[]): Promise<void> {
    let reservedHere = claims.length;
    const launch = (execution: StartedExecution, startRecorded: boolean) => {
      reservedHere--;
      this.reserved--;
      this.run(execution, startRecorded);
    };
    const drop: Claim[] = [];
    try {
      const { loaded, notStarted } = await this.deps.store.executionsLoad(claims);
      const ids = new Set(notStarted);
      drop.push(...claims.filter((c) => ids.has(c.id)));
      for (const execution of loaded) if (execution.overlap === 'allow') launch(execution, false);
      const strict = loaded.filter((e) => e.overlap !== 'allow');
      if (strict.length > 0) {
        const { started, drop: skipped } = await startStrictly(this.deps, {
          workerId: this.id,
          leaseMs: this.options.leaseMs,
          lane,
          executions: strict,
        });
        drop.push(...skipped);
        this.counts.skipped += started.skippedCount;
        for (const execution of started.executions) launch(execution, true);
      }
    } catch (error) {
      // What did not start stays leased in Redis until the lease expires, then it is delivered again.
      this.deps.logger.warn({
        event: 'worker.start_failed',
        worker_id: this.id,
        count: reservedHere,
        err: String(error),
      });
    } finally {
      this.reserved -= reservedHere;
      this.wakeSlotWaiters();
    }
    if (drop.length > 0) this.ack(lane, drop);
  }

  // ---------------------------------------------------------------- running

  private run(execution: StartedExecution, startRecorded: boolean): void {
    const abort = new LazyAbort();
    const startedAt = performance.now();
    const running: Running = { execution, abort, startedAt, deadline: startedAt + execution.timeoutMs };
    this.running.set(execution.id, running);
    this.counts.started++;
    this.recorder.started(execution, startRecorded);
    void this.runWithGrace(execution, abort).then((result) => this.ended(running, result));
  }

  private ended({ execution, abort, startedAt }: Running, result: RunResult): void {
    this.running.delete(execution.id);
    const durationMs = Math.round(performance.now() - startedAt);
    const reason = abort.aborted ? abort.reason : null;
    if (reason === CANCELLED || reason === RELEASED) {
      // Someone else decided this attempt's fate (cancel, replace, shutdown release): nothing of ours to record but
      // what a cancelled attempt printed, kept on its row (a released one runs again and prints again).
      this.recorder.forget(execution.id);
      if (reason === CANCELLED) {
        this.ack(execution.lane, [execution]);
        if (result.output) this.keepOutput(execution, result.output);
      }
    } else {
      const ok = result.ok && reason !== TIMEOUT;
      const error = reason === TIMEOUT ? `timed out after ${execution.timeoutMs} ms` : result.error;
      this.recorder.finished(
        toOutcome(execution, { ...result, ok, error }, { durationMs, workerId: this.id, random: this.random }),
      );
    }
    this.wakeSlotWaiters(true);
  }

  /** Runs one attempt; never rejects. A runner that ignores its abort signal is given up on after a grace period. */
  private runWithGrace(execution: StartedExecution, abort: LazyAbort): Promise<RunResult> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (result: RunResult) => {
        if (settled) return;
        settled = true;
        resolve(result);
      };
      this.deps.runner
        .run(execution, abort)
        .then(finish, (error) =>
          finish({ ok: false, exitCode: null, output: '', error: `runner error: ${errorMessage(error)}` }),
        );
      abort.onAbort(() => {
        const giveUp = { ok: false, exitCode: null, output: '', error: 'attempt did not stop after abort' };
        setTimeout(() => finish(giveUp), this.options.killGraceMs).unref?.();
      });
    });
  }

  /** Aborts attempts past their timeout; one sweep for all of them instead of a timer per attempt. */
  private sweepTimeouts(): void {
    const now = performance.now();
    for (const r of this.running.values()) {
      if (now >= r.deadline && !r.abort.aborted) r.abort.abort(TIMEOUT);
    }
  }

  /** Gives running attempts back to the queue as the same attempt (used when the grace period ends). */
  private async releaseRunning(): Promise<void> {
    const running = [...this.running.values()];
    for (const r of running) {
      r.abort.abort(RELEASED);
      this.recorder.forget(r.execution.id);
    }
    const claims = running.map((r) => ({ id: r.execution.id, token: r.execution.token }));
    try {
      // A start record still in flight must land before the release, or it would leave the row running.
      await this.recorder.writesIdle();
      // Attempts with a start record go back to queued in PostgreSQL; the others never left it.
      const released = await this.deps.store.executionsRelease(claims);
      this.counts.released += running.length;
      const now = this.deps.clock.now();
      this.deps.sink.emit(
        released.map((r) => ({
          ...createdTransition(r, now, this.id),
          from: 'running' as const,
          error: 'released at shutdown',
        })),
      );
      // Due when it was first due (never "now": a clock a few ms ahead of Redis would park it in the delayed set).
      const back = running.map((r) => ({
        id: r.execution.id,
        lane: r.execution.lane,
        priority: r.execution.priority,
        dueAt: new Date(
          Math.min(r.execution.scheduledFor.getTime(), now.getTime() - (performance.now() - r.startedAt)),
        ),
        flow: flowTag(r.execution.jobId, r.execution.flowKey),
      }));
      for (const lane of new Set(back.map((b) => b.lane))) {
        await this.deps.queue.settle({
          lane,
          acks: claims.filter((c) => back.some((b) => b.id === c.id && b.lane === lane)),
          dead: [],
          push: back.filter((b) => b.lane === lane),
        });
      }
    } catch (error) {
      // The leases expire: the reaper makes new attempts of recorded ones, Redis redelivers the others.
      this.deps.logger.warn({ event: 'worker.release_failed', worker_id: this.id, err: String(error) });
    }
  }

  // ---------------------------------------------------------------- liveness

  /**
   * Retires the worker once a newer release's workers serve its lanes: no new claims, running attempts finish (no
   * deadline: a long attempt is not restarted for a deploy; a stop() with a grace, such as SIGTERM's, shortens it).
   */
  private noteRelease(newerRelease: string | null): void {
    if (newerRelease === null || this.supersededByRelease !== null || this.stopping) return;
    this.supersededByRelease = newerRelease;
    this.deps.logger.info({
      event: 'worker.superseded',
      worker_id: this.id,
      release: this.options.release,
      newer_release: newerRelease,
      in_flight: this.inFlight,
    });
    const stopped = this.stop({ graceMs: Number.POSITIVE_INFINITY });
    this.options.onSuperseded(newerRelease, stopped);
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
      release: this.options.release,
      // A newer release's worker counts as running while its heartbeats are at most one lease apart.
      liveWithinMs: this.options.leaseMs,
    };
  }

  /** Extends every lease this worker holds and stops attempts whose row is no longer theirs. */
  async heartbeat(): Promise<void> {
    let lost = new Set<string>();
    try {
      const beat = await this.deps.store.workerUpsert(this.info());
      this.databaseSeenAt = Date.now();
      this.noteRelease(beat.newerRelease);
      const recorded = this.recorder.recordedClaims();
      const still = await this.deps.store.executionsHeartbeat({
        workerId: this.id,
        leaseMs: this.options.leaseMs,
        claims: recorded,
      });
      lost = new Set(recorded.filter((c) => !still.has(c.id)).map((c) => c.id));
      for (const id of lost) {
        const running = this.running.get(id);
        if (!running) continue;
        this.deps.logger.warn({
          event: 'execution.lease_lost',
          execution_id: id,
          job_id: running.execution.jobId,
          worker_id: this.id,
        });
        running.abort.abort(CANCELLED);
      }
    } catch (error) {
      // PostgreSQL is away: the attempts are still ours, so their Redis leases are renewed below all the same (the
      // reaper does not fail an attempt whose Redis lease is held, so outcomes computed meanwhile are kept).
      this.deps.logger.warn({ event: 'worker.heartbeat_failed', worker_id: this.id, err: String(error) });
    }
    // Cut off from PostgreSQL for too long (a partition, not a restart): stop vouching for the attempts in Redis, so
    // the reaper can hand them to workers that can record them.
    if (Date.now() - this.databaseSeenAt > OUTAGE_VOUCH_LEASES * this.options.leaseMs) return;
    try {
      const byLane = new Map<Lane, Claim[]>();
      for (const c of this.recorder.heldClaims()) {
        if (lost.has(c.id)) continue;
        const list = byLane.get(c.lane) ?? [];
        list.push({ id: c.id, token: c.token });
        byLane.set(c.lane, list);
      }
      // Sent together, right after the list was built: a claim settled later is acknowledged after this heartbeat
      // on the same connection, so the heartbeat can never restore a lease that was just acknowledged.
      await Promise.all(
        [...byLane].map(([lane, claims]) => this.deps.queue.heartbeat({ lane, claims, leaseMs: this.options.leaseMs })),
      );
    } catch (error) {
      this.deps.logger.warn({ event: 'worker.heartbeat_failed', worker_id: this.id, err: String(error) });
    }
  }

  // ---------------------------------------------------------------- helpers

  /** Best effort: the row is final already, and its output only helps whoever reads it. */
  private keepOutput(execution: StartedExecution, output: string): void {
    // The row turns final when the cancel or the reaper commits, which may be just after the attempt was stopped.
    const attempt = (left: number) =>
      this.deps.store
        .executionsKeepOutput([{ id: execution.id, token: execution.token, output }])
        .then((kept) => {
          if (!kept.has(execution.id) && left > 0) setTimeout(() => void attempt(left - 1), 500).unref?.();
        })
        .catch((error) =>
          this.deps.logger.warn({
            event: 'worker.keep_output_failed',
            worker_id: this.id,
            execution_id: execution.id,
            err: String(error),
          }),
        );
    void attempt(3);
  }

  private ack(lane: Lane, claims: Claim[]): void {
    this.deps.queue.settle({ lane, acks: claims, dead: [], push: [] }).catch((error) => {
      this.deps.logger.warn({ event: 'worker.ack_failed', worker_id: this.id, err: String(error) });
    });
  }

  /**
   * Resolves when a slot frees (with `free`: once that many are free), something else may have changed (a flush, a
   * stop), or after `timeoutMs`.
   */
  private waitForSlot(timeoutMs: number, free = 1): Promise<void> {
    return new Promise((resolve) => {
      const waiter = { free, wake: done };
      const timer = setTimeout(() => {
        const i = this.slotWaiters.indexOf(waiter);
        if (i >= 0) this.slotWaiters.splice(i, 1);
        resolve();
      }, timeoutMs);
      this.slotWaiters.push(waiter);
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }

  /**
   * Wakes the waiters; `slotFreed` (an attempt ended): only those for whom enough slots are free now (attempts end
   * one at a time, and a claim that waits for several free slots need not look again at each).
   */
  private wakeSlotWaiters(slotFreed = false): void {
    const free = this.options.concurrency - this.inFlight;
    const waiters = this.slotWaiters;
    if (slotFreed && !this.stopping && waiters.every((w) => w.free > free)) return;
    this.slotWaiters = [];
    for (const w of waiters) w.wake();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
