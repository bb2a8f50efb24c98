/**
 * The scheduler tick on Lambda, run every minute by an EventBridge schedule (infra/scheduler.ts): one scheduler
 * pass, the reaper, the reconciler and the retention pass within the invocation's time budget, then a
 * `work-available` event on the bus
 * that wakes a worker Lambda (infra/workers.ts) when short-lane work ready or due before the next tick exceeds what
 * the running container workers have room for, and the
 * queue metrics the container service scales on (queue-metrics.ts, when METRICS_NAMESPACE is set).
 *
 * A partial failure (Redis away, one pass failing) is logged and reported in the result: every pass is safe to
 * repeat and the next tick runs them again. The invocation fails only when PostgreSQL is unreachable, because then
 * nothing can be scheduled at all and the failure must show in the function's error metrics.
 */
import {
  LANES,
  newRetentionCursor,
  pruneOnce,
  reapOnce,
  reconcileOnce,
  runTick,
  type PruneResult,
  type ReapResult,
  type TickResult,
  type WorkerInfo,
} from '@jobs/core';
import type { Context as LambdaContext, ScheduledEvent } from 'aws-lambda';
import { pruneAccessOnce } from './access-retention';
import { WORK_AVAILABLE_DETAIL_TYPE, type WorkAvailableDetail } from './events';
import { budgetMs, lambdaHandler, lambdaResources, wakeHorizonMs, type LambdaResources } from './lambda';
import { publishQueueMetrics, type QueueMetricsSummary } from './queue-metrics';
import { UnreachableError } from './resources';
import { retentionRules } from './scheduler-loop';

/** Time runTick leaves for the repair passes, the wake-up and the flush. */
const TICK_RESERVE_MS = 15_000;
/** Time the repair passes leave for the wake-up and the flush. */
const WAKE_RESERVE_MS = 5_000;
/** Longest wait for EventBridge to take the events (the next tick publishes again anyway). */
const FLUSH_MAX_MS = 10_000;
/** Time the flush leaves for the queue metrics, which report whether it succeeded. */
const METRICS_RESERVE_MS = 3_000;
/** Longest the retention pass may take in one tick (it continues in the next one). */
const RETENTION_BUDGET_MS = 5_000;
/** Where the retention sweep is, kept while the Lambda container lives. */
const retentionCursor = newRetentionCursor();
/** How long the PostgreSQL reachability check may take after a failed pass. */
const PING_TIMEOUT_MS = 3_000;

export interface TickSummary {
  tick: TickResult | null;
  reaped: ReapResult | null;
  reconciled: { scanned: number; pushed: number } | null;
  pruned: PruneResult | null;
  /**
   * Short-lane depth as the wake-up saw it, and the free slots of the container workers serving it; `workers`
   * work-available events were sent (`published` when any) for the rest.
   */
  wake: {
    ready: number;
    delayed: number;
    dueSoon: number;
    containerSlots: number;
    workers: number;
    published: boolean;
    delivered: boolean | null;
  } | null;
  /** What went out as CloudWatch metrics (null when METRICS_NAMESPACE is unset or the pass failed). */
  metrics: QueueMetricsSummary | null;
  /** Passes that failed or were skipped for lack of time, with the reason. */
  errors: { step: string; error: string }[];
  ms: number;
}

/**
 * One tick. Exported for tests; `handler` is this behind the shared middy wiring.
 * @example await tick(scheduledEvent, context)
 */
async function tick(_event: ScheduledEvent, context: LambdaContext): Promise<TickSummary> {
  const started = Date.now();
  const ctx = await lambdaResources();
  const { config, logger } = ctx;
  const summary: TickSummary = {
    tick: null,
    reaped: null,
    reconciled: null,
    pruned: null,
    wake: null,
    metrics: null,
    errors: [],
    ms: 0,
  };
  let reachable: Promise<boolean> | null = null;

  /** Runs one pass; a failure is recorded, and ends the invocation only if PostgreSQL is gone. */
  const pass = async <T>(step: string, run: () => Promise<T>): Promise<T | null> => {
    try {
      return await run();
    } catch (error) {
      summary.errors.push({ step, error: String(error) });
      logger.warn({ event: 'lambda.tick_step_failed', step, err: String(error) });
      reachable ??= pgReachable(ctx);
      if (!(await reachable)) {
        throw new UnreachableError(`PostgreSQL is unreachable; the tick did not run (${step}: ${String(error)})`);
      }
      return null;
    }
  };
  const skip = (step: string) =>
    summary.errors.push({ step, error: 'skipped: too little time left in this invocation' });

  summary.tick = await pass('tick', () =>
    runTick(ctx, {
      lookaheadMs: config.lookaheadMs,
      misfireGraceMs: config.misfireGraceMs,
      deadline: new Date(Date.now() + budgetMs(context, TICK_RESERVE_MS)),
    }),
  );
  if (budgetMs(context, WAKE_RESERVE_MS) > 0) {
    summary.reaped = await pass('reap', () => reapOnce(ctx, { lanes: LANES, leaseMs: config.leaseMs }));
  } else skip('reap');
  if (budgetMs(context, WAKE_RESERVE_MS) > 0) {
    summary.reconciled = await pass('reconcile', () =>
      reconcileOnce(ctx, { deadline: Date.now() + budgetMs(context, WAKE_RESERVE_MS) }),
    );
  } else skip('reconcile');
  // The Prometheus counters' totals (packages/store/src/metrics.ts), and what this tick publishes as AttemptsFinished.
  const folded = await pass('fold', () => ctx.store.totalsFold());
  if (budgetMs(context, WAKE_RESERVE_MS) > 0) {
    const deadline = Date.now() + Math.min(RETENTION_BUDGET_MS, budgetMs(context, WAKE_RESERVE_MS));
    summary.pruned = await pass('retention', () =>
      pruneOnce(ctx, { rules: retentionRules(config), cursor: retentionCursor, deadline }),
    );
  } else skip('retention');
  // Cosmetic (the workers list filters by heartbeat age); Lambda workers leave a row behind only when killed.
  await ctx.store.workersPrune(Math.max(10 * config.leaseMs, 10 * 60_000)).catch(() => undefined);
  if (budgetMs(context, WAKE_RESERVE_MS) > 0) {
    await pass('access_prune', () =>
      pruneAccessOnce(ctx.store, {
        auditRetentionMs: config.auditRetentionMs,
        budgetMs: Math.min(500, budgetMs(context, WAKE_RESERVE_MS)),
      }),
    );
  } else skip('access_prune');

  summary.wake = await pass('wake', () => wakeWorkers(ctx));
  // The flush comes before the metrics: an EventBridge (or NAT) outage is then one of this tick's step errors, and
  // TickStepErrors carries it to the tick alarm. Published after it, the failure would show in the log only.
  if (ctx.events) {
    const delivered = await ctx.events.flush(Math.min(FLUSH_MAX_MS, budgetMs(context, METRICS_RESERVE_MS)));
    if (summary.wake) summary.wake.delivered = summary.wake.published ? delivered : null;
    if (!delivered)
      summary.errors.push({
        step: 'events',
        error: 'EventBridge did not take every event in time; the rest stay buffered',
      });
  }
  const metrics = ctx.metrics;
  if (metrics) {
    // "Active" as the API's /workers has it: a heartbeat within two lease timeouts.
    summary.metrics = await pass('metrics', () =>
      publishQueueMetrics(ctx, metrics, {
        workerActiveWithinMs: 2 * config.leaseMs,
        folded,
        stepErrors: summary.errors.length,
      }),
    );
  }
  summary.ms = Date.now() - started;
  const busy = (summary.tick?.created ?? 0) > 0 || summary.wake?.published || summary.errors.length > 0;
  logger[summary.errors.length > 0 ? 'warn' : busy ? 'info' : 'debug']({ event: 'lambda.tick', ...summary });
  return summary;
}

/**
 * Publishes `work-available` when the short lane has more ids ready, or delayed ids due before the next tick (fire
 * times the tick just materialised, retries whose backoff ends soon), than the running container workers have free
 * slots for: they serve the short lane too, are paid for whether busy or not, and claim delayed ids as they come
 * due. Work due later wakes nobody yet. One event wakes one worker Lambda; the backlog beyond the containers wakes
 * one per WORKER_CONCURRENCY ids, at most WAKE_MAX_WORKERS a tick. Lambdas still draining from earlier ticks are not
 * subtracted: work still waiting means they are not keeping up, and a woken Lambda that finds nothing returns at once.
 */
async function wakeWorkers(ctx: LambdaResources): Promise<NonNullable<TickSummary['wake']>> {
  const [depths, workers] = await Promise.all([
    ctx.queue.depth(),
    // "Active" as the API's /workers has it: a heartbeat within two lease timeouts.
    ctx.store.workerListActive(2 * ctx.config.leaseMs),
  ]);
  const depth = depths.short;
  // Only what comes due before the next tick: a woken Lambda waits for it (functions/worker.ts), and what is due
  // later is the next tick's to wake for.
  const dueSoon = await ctx.queue.dueCount({ lane: 'short', before: new Date(Date.now() + wakeHorizonMs(ctx.config)) });
  const containerSlots = containerSlotsFree(workers, depths.long.ready);
  const beyond = Math.max(0, depth.ready + dueSoon - containerSlots);
  const wake = {
    ready: depth.ready,
    delayed: depth.delayed,
    dueSoon,
    containerSlots,
    workers: 0,
    published: false,
    delivered: null,
  };
  if (beyond === 0) return wake;
  if (!ctx.events) {
    ctx.logger.debug({ event: 'lambda.tick_no_bus', reason: 'EVENT_BUS_NAME is not set: no worker Lambda to wake' });
    return wake;
  }
  const detail: WorkAvailableDetail = { lanes: { short: { ready: depth.ready, delayed: depth.delayed } } };
  const count = Math.min(ctx.config.wakeMaxWorkers, Math.ceil(beyond / ctx.config.workerConcurrency));
  for (let i = 0; i < count; i++)
    ctx.events.publish(WORK_AVAILABLE_DETAIL_TYPE, detail as unknown as Record<string, unknown>);
  return { ...wake, workers: count, published: true };
}

/**
 * Short-lane attempts the running container (and local) workers can take now: their free slots as their last
 * heartbeat reported them, less the long lane's ready ids, which only they can run.
 */
function containerSlotsFree(workers: readonly WorkerInfo[], longReady: number): number {
  const free = workers
    .filter((w) => w.kind !== 'lambda' && w.lanes.includes('short'))
    .reduce((sum, w) => sum + Math.max(0, w.concurrency - w.inFlight), 0);
  return Math.max(0, free - longReady);
}

async function pgReachable(ctx: LambdaResources): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      ctx.store.ping(),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS))),
    ]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

export const handler = lambdaHandler('tick', tick);
