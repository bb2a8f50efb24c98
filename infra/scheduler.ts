/** The scheduler tick: a Lambda that an EventBridge schedule runs every minute. */
import { afterMigration } from './migrate';
import { TICK_INTERVAL_SECONDS, lambdaDefaults, sharedEnvironment, sharedLink } from './runtime';

export const tickFunction = new sst.aws.Function('Tick', {
  ...lambdaDefaults,
  handler: 'functions/tick.handler',
  // No longer than the rate, so ticks rarely overlap (they are safe to overlap, just wasteful).
  timeout: `${TICK_INTERVAL_SECONDS} seconds`,
  link: sharedLink,
  environment: sharedEnvironment,
  transform: { function: afterMigration },
});

export const tickSchedule = new sst.aws.Cron('TickSchedule', {
  // EventBridge's finest rate, and TICK_INTERVAL_SECONDS (SCHEDULE_INTERVAL) in words; the tick
  // materialises fire times LOOKAHEAD ahead, so second-level schedules still start on time.
  schedule: 'rate(1 minute)',
  function: tickFunction,
});
