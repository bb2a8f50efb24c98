/**
 * @module scheduler-loop — the local/container scheduler: runTick every SCHEDULE_INTERVAL, with the reaper, the
 * fold of closed minutes into the monotonic totals the Prometheus counters read (packages/store/src/metrics.ts) and
 * the retention pass, and the reconciler every RECONCILE_INTERVAL. Several of these may run at once; every pass is
 * safe to repeat.
 */
import { LANES, newRetentionCursor, pruneOnce, reapOnce, reconcileOnce, runTick } from '@jobs/core';
import { pruneAccessOnce } from './access-retention';
import type { Context } from './context';

export interface SchedulerLoop {
  stop(): Promise<void>;
  /** Resolves after the next complete pass (tests). */
  nextPass(): Promise<void>;
}

/** Time one scheduler pass gives the retention pass (a tenth of the default interval). */
const RETENTION_BUDGET_MS = 1000;

export const retentionRules = (config: Pick<Context['config'], 'historyRetentionMs' | 'deadRetentionMs'>) => ({
  historyMs: config.historyRetentionMs,
  deadMs: config.deadRetentionMs,
});

export function startSchedulerLoop(ctx: Context): SchedulerLoop {
  const { config, logger } = ctx;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<void> | null = null;
  let lastReconcile = 0;
  let waiters: (() => void)[] = [];
  const retention = newRetentionCursor();

  const pass = async () => {
    const started = Date.now();
    try {
      const tick = await runTick(ctx, { lookaheadMs: config.lookaheadMs, misfireGraceMs: config.misfireGraceMs });
      if (tick.created > 0 || tick.pushFailed > 0)
        logger.info({ event: 'scheduler.tick', ...tick, ms: Date.now() - started });
    } catch (error) {
      logger.warn({ event: 'scheduler.tick_failed', err: String(error) });
    }
    try {
      const reaped = await reapOnce(ctx, { lanes: LANES, leaseMs: config.leaseMs });
      if (reaped.expired > 0 || reaped.requeued > 0) logger.info({ event: 'scheduler.reaped', ...reaped });
    } catch (error) {
      logger.warn({ event: 'scheduler.reap_failed', err: String(error) });
    }
    if (Date.now() - lastReconcile >= config.reconcileIntervalMs) {
      try {
        const reconciled = await reconcileOnce(ctx);
        lastReconcile = Date.now();
        if (reconciled.pushed > 0) logger.info({ event: 'scheduler.reconciled', ...reconciled });
      } catch (error) {
        logger.warn({ event: 'scheduler.reconcile_failed', err: String(error) });
      }
    }
    try {
      const pruned = await pruneAccessOnce(ctx.store, { auditRetentionMs: config.auditRetentionMs, budgetMs: 500 });
      if (pruned.audit > 0 || pruned.sessions > 0) logger.info({ event: 'scheduler.access_pruned', ...pruned });
    } catch (error) {
      logger.warn({ event: 'scheduler.access_prune_failed', err: String(error) });
    }
    try {
      await ctx.store.totalsFold();
    } catch (error) {
      logger.warn({ event: 'scheduler.fold_failed', err: String(error) });
    }
    try {
      // Last, and within its own small budget: the scheduling passes above never wait for it.
      await pruneOnce(ctx, {
        rules: retentionRules(config),
        cursor: retention,
        deadline: Date.now() + RETENTION_BUDGET_MS,
      });
    } catch (error) {
      logger.warn({ event: 'scheduler.retention_failed', err: String(error) });
    }
    try {
      await ctx.store.workersPrune(Math.max(10 * config.leaseMs, 10 * 60_000));
    } catch {
      // Cosmetic: the workers list filters by heartbeat age anyway.
    }
  };

  const loop = () => {
    if (stopped) return;
    current = pass().finally(() => {
      current = null;
      const w = waiters;
      waiters = [];
      for (const resolve of w) resolve();
      if (!stopped) timer = setTimeout(loop, config.scheduleIntervalMs);
    });
  };
  loop();

  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (current) await current;
    },
    nextPass() {
      return new Promise((resolve) => waiters.push(resolve));
    },
  };
}
