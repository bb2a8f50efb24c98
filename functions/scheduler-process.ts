/** `npm run scheduler`: the scheduler tick, reaper and reconciler in a loop every SCHEDULE_INTERVAL. */
import { createContext } from './context';
import { exitOnStartError, onShutdownSignal } from './process';
import { startSchedulerLoop } from './scheduler-loop';

async function main() {
  // Migrations run once per deploy (its migration step, or `npm run migrate`), never here: wait for the schema.
  const ctx = await createContext({ requireSchema: true, poolMax: 4 });
  const loop = startSchedulerLoop(ctx);
  ctx.logger.info({
    event: 'scheduler.started',
    interval_ms: ctx.config.scheduleIntervalMs,
    lookahead_ms: ctx.config.lookaheadMs,
  });
  onShutdownSignal(
    async () => {
      await loop.stop();
      await ctx.close();
    },
    { exitWithParent: ctx.config.exitWithParent },
  );
}

main().catch(exitOnStartError);
