/** The scheduler tick: a Lambda that an EventBridge schedule runs every minute. */
import { TICK_RESERVED_CONCURRENCY } from './budget';
import { publishToBus } from './events';
import { afterMigration } from './migrate';
import {
  LAMBDA_WORKER_CONCURRENCY,
  METRICS_NAMESPACE,
  TICK_INTERVAL_SECONDS,
  WAKE_MAX_WORKERS,
  lambdaDefaults,
  sharedEnvironment,
  storeLinks,
} from './runtime';

export const tickFunction = new sst.aws.Function('Tick', {
  ...lambdaDefaults,
  handler: 'functions/tick.handler',
  // No longer than the rate, so ticks rarely overlap (they are safe to overlap, just wasteful).
  timeout: `${TICK_INTERVAL_SECONDS} seconds`,
  // Its own slot: unreserved account concurrency is shared with 900-second worker Lambdas, and a throttled tick
  // stops all scheduling.
  concurrency: { reserved: TICK_RESERVED_CONCURRENCY },
  // A failed tick is repeated by the next one a minute later; Lambda's own two retries would only pile on.
  retries: 0,
  link: storeLinks,
  permissions: [publishToBus],
  environment: {
    ...sharedEnvironment,
    // The fan-out of wake-ups: one worker Lambda per WORKER_CONCURRENCY ids waiting, at most WAKE_MAX_WORKERS.
    WORKER_CONCURRENCY: String(LAMBDA_WORKER_CONCURRENCY),
    WAKE_MAX_WORKERS: String(WAKE_MAX_WORKERS),
    // The queue metrics the container service scales on (infra/workers.ts).
    METRICS_NAMESPACE,
  },
  transform: {
    function: afterMigration,
    // A tick still queued (throttled) when the next one fires is superseded by it.
    eventInvokeConfig: { maximumEventAgeInSeconds: TICK_INTERVAL_SECONDS },
  },
});

export const tickSchedule = new sst.aws.Cron('TickSchedule', {
  // EventBridge's finest rate, and TICK_INTERVAL_SECONDS (SCHEDULE_INTERVAL) in words; the tick
  // materialises fire times LOOKAHEAD ahead, so second-level schedules still start on time.
  schedule: 'rate(1 minute)',
  function: tickFunction,
});
