/** The runtime contract: the environment every entry point reads, its durations, and shared Lambda settings. */
import { vpc } from './network';
import { databaseApp, databaseSsl, databaseUrl, redis, redisEnvironment } from './data';
import { bus } from './events';
import { queueBackend, settings } from './stage';

/** How often the tick runs: EventBridge's finest rate (the schedule in infra/scheduler.ts). */
export const TICK_INTERVAL_SECONDS = 60;
/** Fire times are materialised this far ahead; it must exceed the tick interval or second-level schedules start late. */
const LOOKAHEAD_SECONDS = 120;
/** A worker that misses heartbeats for this long loses its lease to the reaper. */
const LEASE_TIMEOUT_SECONDS = 30;
/** Lambda's hard maximum. */
export const WORKER_LAMBDA_TIMEOUT_SECONDS = 900;
/** Time a worker Lambda keeps after its last job to record outcomes and release leases. */
export const LAMBDA_SHUTDOWN_GRACE_SECONDS = 60;
/**
 * The longest job timeout a worker Lambda may start: it stops claiming once its remaining time drops below
 * this plus the grace, so 900 - 600 - 60 leaves a 240 s claiming window. Longer jobs belong to the container lane.
 */
const SHORT_LANE_MAX_TIMEOUT_SECONDS = 600;
/** Attempts one worker Lambda runs at once; the tick also sizes its fan-out by it (one Lambda per this many waiting). */
export const LAMBDA_WORKER_CONCURRENCY = 4;
/** Most worker Lambdas one tick wakes (a backlog grows the fleet by at most this many a minute). */
export const WAKE_MAX_WORKERS = 10;
/** API Gateway gives up on an HTTP API integration after 30 s; the API Lambda ends first, with an error it logs. */
export const API_TIMEOUT_SECONDS = 25;
/** The API's statements give up before its Lambda does, so a slow query is a logged 503, not a gateway timeout. */
export const API_QUERY_TIMEOUT_SECONDS = 20;
/** Fargate sends SIGKILL this long after SIGTERM; 120 s is the most Fargate allows. */
export const CONTAINER_STOP_TIMEOUT_SECONDS = 120;
/** The container worker's drain after SIGTERM, leaving 10 s to release leases and close pools before SIGKILL. */
export const CONTAINER_SHUTDOWN_GRACE_SECONDS = 110;
/** Attempts one container worker runs at once. */
export const CONTAINER_WORKER_CONCURRENCY = 8;

/** Durations in the form the runtime parses ("30s"). */
export const seconds = (value: number) => `${value}s`;

/** The CloudWatch namespace of the tick's queue metrics (and of the scaling policies that read them). */
export const METRICS_NAMESPACE = `${$app.name}/${$app.stage}`;

/**
 * What every function and the container service gets; workers add lanes, concurrency and grace. No value here is
 * a secret: the URLs carry no password (see infra/data.ts).
 */
export const sharedEnvironment = {
  DATABASE_URL: databaseUrl,
  DATABASE_SSL: databaseSsl,
  // Named prepared statements are session state, which RDS Proxy may pin a client connection for.
  DATABASE_PREPARED_STATEMENTS: settings.databaseProxy ? 'unnamed' : 'named',
  QUEUE_BACKEND: queueBackend,
  ...redisEnvironment,
  // A {hash-tag} keeps every key of the queue in one slot, so multi-key Lua works in cluster mode.
  QUEUE_PREFIX: '{jobs}',
  EVENT_BUS_NAME: bus.name,
  SCHEDULE_INTERVAL: seconds(TICK_INTERVAL_SECONDS),
  LOOKAHEAD: seconds(LOOKAHEAD_SECONDS),
  LEASE_TIMEOUT: seconds(LEASE_TIMEOUT_SECONDS),
  SHORT_LANE_MAX_TIMEOUT: seconds(SHORT_LANE_MAX_TIMEOUT_SECONDS),
  // Each published transition is a PutEvents entry; the stage's setting says which (infra/settings.ts).
  EVENT_TRANSITIONS: settings.eventTransitions,
};

/**
 * Links give a Lambda the passwords of both stores (encrypted in its bundle) and give nothing in IAM: PostgreSQL's
 * as the application role (DatabaseApp), never the master user's, which only the migration step links. The bus is
 * not linked (that would grant events:*), publishers get `publishToBus` instead (infra/events.ts).
 */
export const storeLinks = redis ? [databaseApp, redis] : [databaseApp];

export const lambdaDefaults = {
  runtime: 'nodejs22.x',
  // About 20% cheaper than x86 and the dependencies are pure JavaScript.
  architecture: 'arm64',
  // Code splitting: what a handler imports dynamically (the EventBridge SDK until the first publish, the dashboard
  // until a dashboard page, tracing until it is configured) goes into chunks beside the entry, so Lambda's init
  // reads and compiles only the entry. test/lambda/bundle.ts builds the same way.
  nodejs: { splitting: true },
  vpc,
} satisfies Partial<sst.aws.FunctionArgs>;
