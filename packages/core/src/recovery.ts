/**
 * @module recovery — the two repair passes: the reaper (expired leases) and the reconciler (Redis lost an id).
 * Each is one bounded pass that returns counts; callers decide how often to run them.
 */
import type { Clock, Logger, Outcome, RecoveryQueue, RecoveryStore, TransitionSink } from './ports';
import { hasRetriesLeft, retryDelayMs } from './retry';
import type { Lane, QueueItem } from './types';
import { recordOutcomes } from './worker';

export interface RecoveryDeps {
  store: RecoveryStore;
  queue: RecoveryQueue;
  clock: Clock;
  sink: TransitionSink;
  logger: Logger;
  random?: () => number;
}

export interface ReapResult {
  /** Running attempts whose lease expired in PostgreSQL, recorded as failed (retried) or dead. */
  expired: number;
  /** Redis leases that expired on ids PostgreSQL still has waiting (claimed but never started): pushed back. */
  requeued: number;
}

/**
 * Recovers attempts whose worker stopped heartbeating. The database decides: a running row whose lease
 * (by the database clock) has passed is failed with "lease expired" through the same fenced write a worker uses,
 * so a late worker's result is rejected. Redis leases that expired before the row was ever started go back to
 * the queue as the same attempt.
 * @example await reapOnce(deps, { lanes: ['short', 'long'] })
 */
export async function reapOnce(deps: RecoveryDeps, options: { lanes: readonly Lane[]; limit?: number }): Promise<ReapResult> {
  const limit = options.limit ?? 500;
  const random = deps.random ?? Math.random;
  const result: ReapResult = { expired: 0, requeued: 0 };

  const expired = await deps.store.executionsLeaseExpired(limit);
  if (expired.length > 0) {
    const outcomes: Outcome[] = expired.map((e) => {
      const retry = hasRetriesLeft(e.attempt, e.maxRetries);
      return {
        id: e.id,
        token: e.token,
        jobId: e.jobId,
        attempt: e.attempt,
        lane: e.lane,
        priority: e.priority,
        status: retry ? 'failed' : 'dead',
        exitCode: null,
        output: null,
        error: `lease expired: worker ${e.workerId ?? 'unknown'} stopped heartbeating`,
        durationMs: 0,
        retryDelayMs: retry ? retryDelayMs(e.backoff, e.attempt, random) : null,
      };
    });
    await recordOutcomes(deps, outcomes, null);
    result.expired = outcomes.length;
    deps.logger.info({ event: 'reaper.expired', count: outcomes.length });
  }

  for (const lane of options.lanes) {
    const ids = await deps.queue.reapExpired({ lane, limit });
    if (ids.length === 0) continue;
    const waiting = await deps.store.executionsWaiting(ids);
    if (waiting.length > 0) {
      await deps.queue.push(waiting);
      result.requeued += waiting.length;
    }
  }
  return result;
}

/**
 * Pushes every waiting execution that Redis holds nowhere (after a flush, a failover or a failed push), without
 * duplicating ids that are there. Pages through PostgreSQL by id so a long backlog is covered in bounded steps.
 * @example await reconcileOnce(deps)
 */
export async function reconcileOnce(
  deps: Pick<RecoveryDeps, 'store' | 'queue' | 'logger'>,
  options: { pageSize?: number; deadline?: number } = {},
): Promise<{ scanned: number; pushed: number }> {
  const pageSize = options.pageSize ?? 1000;
  let afterId: string | null = null;
  let scanned = 0;
  let pushed = 0;
  for (;;) {
    const page: QueueItem[] = await deps.store.executionsWaitingPage({ afterId, limit: pageSize });
    if (page.length === 0) break;
    scanned += page.length;
    pushed += await deps.queue.ensure(page);
    afterId = page[page.length - 1]!.id;
    if (page.length < pageSize) break;
    if (options.deadline !== undefined && Date.now() >= options.deadline) break;
  }
  if (pushed > 0) deps.logger.warn({ event: 'reconciler.pushed', count: pushed, scanned });
  return { scanned, pushed };
}
