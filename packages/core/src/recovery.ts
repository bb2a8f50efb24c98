/**
 * @module recovery — the two repair passes: the reaper (expired leases) and the reconciler (Redis lost an id).
 * Each is one bounded pass that returns counts; callers decide how often to run them.
 */
import { restoreFlow } from './flow';
import type { Clock, Logger, Outcome, RecoveryQueue, RecoveryStore, TransitionSink } from './ports';
import { settle } from './recording';
import { hasRetriesLeft, retryDelayMs } from './retry';
import { createdTransition, outcomeTransition } from './transitions';
import type { Backoff, Lane, QueueItem, Transition } from './types';

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
  /** Claims that expired in Redis before their start was recorded: delivered again as the same attempt. */
  requeued: number;
  /** Of those, attempts delivered `maxDeliveries` times without ever recording a start: recorded as failed. */
  undeliverable: number;
}

/**
 * Recovers attempts whose worker stopped heartbeating. The database decides: a running row whose lease
 * (by the database clock) has passed is failed with "lease expired" through the same fenced write a worker uses,
 * so a late worker's result is rejected. A claim that expired in Redis before its start was recorded goes back to
 * the queue as the same attempt, unless it has been delivered `maxDeliveries` times already: an attempt that kills
 * its worker before the start record is written must still use up its retries and end dead. With `leaseMs` (the
 * workers' lease) those redeliveries are spread out in time (redeliveryDue); without it they are due at once.
 * @example await reapOnce(deps, { lanes: ['short', 'long'] })
 */
export async function reapOnce(
  deps: RecoveryDeps,
  options: { lanes: readonly Lane[]; limit?: number; maxDeliveries?: number; leaseMs?: number },
): Promise<ReapResult> {
  const limit = options.limit ?? 500;
  const maxDeliveries = options.maxDeliveries ?? 3;
  const random = deps.random ?? Math.random;
  const result: ReapResult = { expired: 0, requeued: 0, undeliverable: 0 };
  const fail = (
    e: {
      id: string;
      token: string;
      jobId: string;
      attempt: number;
      lane: Lane;
      priority: number;
      maxRetries: number;
      backoff: Backoff;
    },
    error: string,
    workerId: string | null,
  ): Outcome => {
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
      error,
      durationMs: 0,
      retryDelayMs: retry ? retryDelayMs(e.backoff, e.attempt, random) : null,
      workerId,
    };
  };

  let expired = await deps.store.executionsLeaseExpired(limit);
  if (expired.length > 0) {
    // A worker cut off from PostgreSQL (an outage, a restart) could not renew these leases, but it keeps renewing
    // its Redis leases: an attempt whose Redis lease is still held under the same token is alive, and its outcome
    // is on its way. Only attempts whose Redis lease lapsed too are failed. Without Redis, PostgreSQL decides alone.
    const held = await leasesStillHeld(deps, expired);
    if (held.size > 0) {
      expired = expired.filter((e) => !held.has(e.id));
      deps.logger.info({ event: 'reaper.lease_held', count: held.size });
    }
  }
  if (expired.length > 0) {
    const outcomes = expired.map((e) =>
      fail(e, `lease expired: worker ${e.workerId ?? 'unknown'} stopped heartbeating`, e.workerId),
    );
    result.expired = (await record(deps, outcomes)).length;
    deps.logger.info({ event: 'reaper.expired', count: result.expired });
  }

  for (const lane of options.lanes) {
    const reaped = await deps.queue.reapExpired({ lane, limit });
    if (reaped.length === 0) continue;
    const deliveries = new Map(reaped.map((r) => [r.id, r.deliveries]));
    const waiting = await deps.store.executionsWaiting(reaped.map((r) => r.id));
    const again = waiting.filter((w) => (deliveries.get(w.id) ?? 0) < maxDeliveries);
    const spent = waiting.filter((w) => (deliveries.get(w.id) ?? 0) >= maxDeliveries);
    if (again.length > 0) {
      // Seen on the execution as a lost delivery (its worker and start unknown: nothing of it reached PostgreSQL).
      await deps.store.executionsDeliveryLost(again.map((w) => w.id));
      const now = deps.clock.now().getTime();
      await deps.queue.push(
        again.map((w) => ({
          ...w,
          dueAt: redeliveryDue(w.dueAt, now, options.leaseMs, deliveries.get(w.id) ?? 1, random),
        })),
      );
      result.requeued += again.length;
    }
    if (spent.length > 0) {
      const outcomes = spent.map((w) =>
        fail(
          { ...w, token: `reaper-${w.id}` },
          `worker lost ${deliveries.get(w.id)} times before the attempt's start was recorded`,
          null,
        ),
      );
      result.undeliverable += (await record(deps, outcomes)).length;
    }
  }
  return result;
}

/**
 * When an attempt whose worker was lost before its start was recorded is due again: after a random wait of up to one
 * lease per loss so far (at most 5 minutes), and never before it was due. Delivered again at once, such an attempt
 * was the oldest item of its lane, so every restarted worker claimed it first; a poison job (one that kills its
 * worker) then killed them in step, and a few of them kept all of a lane's workers down together while healthy work
 * waited. Spread out, they take the workers down one at a time (the fault suite's poison-jobs scenario under load).
 */
export function redeliveryDue(
  dueAt: Date,
  now: number,
  leaseMs: number | undefined,
  deliveries: number,
  random: () => number,
): Date {
  if (!leaseMs || leaseMs <= 0) return dueAt;
  const wait = Math.min(REDELIVERY_WAIT_MAX_MS, Math.round(leaseMs * Math.max(1, deliveries) * random()));
  return new Date(Math.max(dueAt.getTime(), now + wait));
}

const REDELIVERY_WAIT_MAX_MS = 5 * 60_000;

async function leasesStillHeld(
  deps: RecoveryDeps,
  expired: { id: string; token: string; lane: Lane }[],
): Promise<Set<string>> {
  const held = new Set<string>();
  try {
    for (const lane of new Set(expired.map((e) => e.lane))) {
      const claims = expired.filter((e) => e.lane === lane).map((e) => ({ id: e.id, token: e.token }));
      for (const id of await deps.queue.leasesHeld({ lane, claims })) held.add(id);
    }
  } catch (error) {
    deps.logger.warn({ event: 'reaper.lease_check_failed', err: String(error) });
    return new Set();
  }
  return held;
}

/** Writes reaper outcomes through the same fenced statement workers use, then logs and settles them. */
async function record(deps: RecoveryDeps, outcomes: Outcome[]): Promise<Outcome[]> {
  const result = await deps.store.executionsFinish(outcomes);
  const now = deps.clock.now();
  const transitions: Transition[] = result.recorded.map((o) => outcomeTransition(o, now, null));
  for (const retry of result.retries) transitions.push(createdTransition(retry, now, null));
  deps.sink.emit(transitions);
  await settle(deps, outcomes, result, null);
  return result.recorded;
}

/**
 * Pushes every waiting execution that Redis holds nowhere (after a flush, a failover or a failed push), without
 * duplicating ids that are there. Pages through PostgreSQL by id so a long backlog is covered in bounded steps.
 * @example await reconcileOnce(deps)
 */
export async function reconcileOnce(
  deps: Pick<RecoveryDeps, 'store' | 'queue' | 'logger'>,
  options: { pageSize?: number; deadline?: number; limitsChangedWithinMs?: number } = {},
): Promise<{ scanned: number; pushed: number }> {
  const pageSize = options.pageSize ?? 1000;
  // Lane states and limits first (a pause or a limit whose copy to Redis failed is repaired here), and the flow
  // counters if Redis lost them, so the attempts pushed below are held to their limits from the first claim.
  await restoreFlow(deps, { changedWithinMs: options.limitsChangedWithinMs ?? 10 * 60_000 });
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
