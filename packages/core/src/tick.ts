/**
 * @module tick — one scheduler pass: materialise due fire times in PostgreSQL, then push them to Redis.
 * Safe to run twice at once: jobs are claimed with SKIP LOCKED and fire times are unique per job.
 */
import type { Clock, Logger, TickStore, TransitionSink, WorkerQueue } from './ports';
import { planFires } from './schedule';
import { createdTransition } from './transitions';

export interface TickDeps {
  store: TickStore;
  queue: Pick<WorkerQueue, 'push'>;
  clock: Clock;
  sink: TransitionSink;
  logger: Logger;
}

export interface TickOptions {
  /** Fire times up to now + lookahead are materialised into the delayed set; must exceed the tick interval. */
  lookaheadMs: number;
  /** Jobs claimed per transaction. */
  batchSize?: number;
  /** A fire time older than now - graceMs when first seen is a misfire. */
  misfireGraceMs?: number;
  /** Stop starting new batches after this instant (Lambda time budget). */
  deadline?: Date;
}

export interface TickResult {
  jobs: number;
  created: number;
  pushed: number;
  pushFailed: number;
  droppedMisfires: number;
  batches: number;
}

/**
 * Runs one tick and returns counts.
 * @example await runTick(deps, { lookaheadMs: 70_000 })
 */
export async function runTick(deps: TickDeps, options: TickOptions): Promise<TickResult> {
  const batchSize = options.batchSize ?? 500;
  const graceMs = options.misfireGraceMs ?? 60_000;
  const result: TickResult = { jobs: 0, created: 0, pushed: 0, pushFailed: 0, droppedMisfires: 0, batches: 0 };
  for (;;) {
    const now = deps.clock.now();
    const horizon = new Date(now.getTime() + options.lookaheadMs);
    const batch = await deps.store.jobsMaterialiseDue({
      horizon,
      limit: batchSize,
      plan: (job) => planFires(job, { now, horizon, graceMs }),
    });
    result.batches += 1;
    result.jobs += batch.jobs;
    result.created += batch.created.length;
    result.droppedMisfires += batch.droppedMisfires;
    if (batch.created.length > 0) {
      deps.sink.emit(batch.created.map((c) => createdTransition(c, now)));
      try {
        await deps.queue.push(batch.created);
        result.pushed += batch.created.length;
      } catch (error) {
        // Committed rows stay queued in PostgreSQL; the reconciler pushes them once Redis answers again.
        result.pushFailed += batch.created.length;
        deps.logger.warn({ event: 'tick.push_failed', count: batch.created.length, err: String(error) });
      }
    }
    if (batch.jobs < batchSize) break;
    if (options.deadline && deps.clock.now() >= options.deadline) break;
  }
  return result;
}
