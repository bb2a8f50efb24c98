/** The scheduler tick: a Lambda that an EventBridge schedule runs every minute. */
import { afterMigration } from './migrate';
import { LAMBDA_WORKER_CONCURRENCY, TICK_INTERVAL_SECONDS, WAKE_MAX_WORKERS, lambdaDefaults, sharedEnvironment, sharedLink } from './runtime';

export const tickFunction = new sst.aws.Function('Tick', {
  ...lambdaDefaults,
  handler: 'functions/tick.handler',
  // No longer than the rate, so ticks rarely overlap (they are safe to overlap, just wasteful).
  timeout: `${TICK_INTERVAL_SECONDS} seconds`,
  link: sharedLink,
  environment: {
    ...sharedEnvironment,
    // The fan-out of wake-ups: one worker Lambda per WORKER_CONCURRENCY ids waiting, at most WAKE_MAX_WORKERS.
    WORKER_CONCURRENCY: String(LAMBDA_WORKER_CONCURRENCY),
    WAKE_MAX_WORKERS: String(WAKE_MAX_WORKERS),
  },
  transform: { function: afterMigration },
});

export const tickSchedule = new sst.aws.Cron('TickSchedule', {
  // EventBridge's finest rate, and TICK_INTERVAL_SECONDS (SCHEDULE_INTERVAL) in words; the tick
  // materialises fire times LOOKAHEAD ahead, so second-level schedules still start on time.
  schedule: 'rate(1 minute)',
  function: tickFunction,
});
