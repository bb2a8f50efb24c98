/**
 * @module context — wiring: builds the logger, pool, Redis client, store, queue and sinks once per process.
 * Entry points (local stack, worker, scheduler, Lambda handlers) take what they need from here.
 */
import type { Clock, QueueAdapter, TransitionSink } from '@jobs/core';
import { createQueue, type RedisClient } from '@jobs/queue';
import { createPostgresQueue } from '@jobs/queue-postgres';
import { createStore, latestMigration, migrate, schemaVersion, type Store } from '@jobs/store';
import type pg from 'pg';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { loadConfig, type Config } from './config';
import { createEventPublisher } from './events';
import { createLogger, fanOut, logSink, type AppLogger } from './logger';
import { checkServices, createPool, createRedis } from './resources';
import { createTracing, type TracingProvider } from './tracing';

export interface Context {
  config: Config;
  logger: AppLogger;
  pool: pg.Pool;
  /** Null when the queue is on PostgreSQL (QUEUE_BACKEND=postgres). */
  redis: RedisClient | null;
  store: Store;
  queue: QueueAdapter;
  sink: TransitionSink;
  clock: Clock;
  /** Spans over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; null (and the SDK never loaded) otherwise. */
  tracing: TracingProvider | null;
  close(): Promise<void>;
}

export interface ContextOptions {
  config?: Config;
  logger?: AppLogger;
  poolMax?: number;
  /** Check both services answer before returning (processes do; Lambda handlers skip it to save a round trip). */
  check?: boolean;
  /** Apply migrations before returning (`npm start`, `npm run migrate`). */
  migrate?: boolean;
  /**
   * Wait (SCHEMA_WAIT) for the schema to reach the version this code needs, then refuse to start: processes that
   * do not migrate themselves (`npm run worker`, `npm run scheduler`; the deploy's migration step runs first).
   */
  requireSchema?: boolean;
  clock?: Clock;
}

/** How often a process re-measures its clock against the database's. */
const CLOCK_SYNC_MS = 60_000;

/**
 * A clock that agrees with PostgreSQL's, whatever the host clock says: the offset between the two is measured
 * (SELECT clock_timestamp(), halfway through the round trip) at start and every minute. Every process then plans
 * with the same "now": a tick on a host whose clock is minutes off neither drops fire times as misfires nor starts
 * them early. Until the first measurement answers, it is the host clock.
 */
function databaseClock(
  pool: pg.Pool,
  hostMs: () => number,
  logger: AppLogger,
): Clock & { sync(): Promise<void>; stop(): void } {
  let offsetMs = 0;
  let warned = false;
  const sync = async () => {
    const before = hostMs();
    const { rows } = await pool.query('SELECT clock_timestamp() AS t');
    const after = hostMs();
    offsetMs = new Date(rows[0].t).getTime() - (before + after) / 2;
    if (Math.abs(offsetMs) > 2000 && !warned) {
      warned = true;
      logger.warn(
        { event: 'clock.skew', offset_ms: Math.round(offsetMs) },
        'the host clock differs from the database clock; using the database clock',
      );
    }
  };
  const timer = setInterval(() => void sync().catch(() => undefined), CLOCK_SYNC_MS);
  timer.unref();
  return { now: () => new Date(hostMs() + offsetMs), sync, stop: () => clearInterval(timer) };
}

export async function createContext(options: ContextOptions = {}): Promise<Context> {
  const config = options.config ?? loadConfig();
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const pool = await createPool(config, { max: options.poolMax ?? config.databasePoolMax, logger });
  const redis = config.queueBackend === 'redis' ? await createRedis(config, logger) : null;
  const hostMs = config.clockOffsetMs ? () => Date.now() + config.clockOffsetMs : Date.now;
  const synced = options.clock ? null : databaseClock(pool, hostMs, logger);
  const tracing = config.otelTracesUrl
    ? await createTracing({ url: config.otelTracesUrl, serviceName: config.otelServiceName })
    : null;
  const close = async () => {
    synced?.stop();
    await tracing?.shutdown().catch(() => undefined);
    await publisher?.close();
    await queue.close();
    redis?.disconnect();
    await pool.end().catch(() => undefined);
  };
  const queue: QueueAdapter = redis ? createQueue(redis, { prefix: config.queuePrefix }) : createPostgresQueue(pool);
  const publisher = config.eventBusName
    ? createEventPublisher({ busName: config.eventBusName, logger, statuses: config.eventTransitions })
    : null;
  try {
    if (options.check ?? true) {
      await checkServices(pool, redis, config);
      await synced?.sync();
    } else {
      void synced?.sync().catch(() => undefined);
    }
    if (options.migrate) {
      const applied = await migrate(pool, migrateOptions(config, logger));
      if (applied.length > 0) logger.info({ event: 'db.migrated', versions: applied });
    }
    if (options.requireSchema) await waitForSchema(pool, config, logger);
  } catch (error) {
    await close();
    throw error;
  }
  return {
    config,
    logger,
    pool,
    redis,
    // With tracing off, attempts are read without their stored trace parent: nothing of tracing on the hot path.
    store: createStore(pool, { traceparent: tracing !== null, historyRetentionMs: config.historyRetentionMs }),
    queue,
    sink: publisher ? fanOut(logSink(logger), publisher) : logSink(logger),
    clock: options.clock ?? synced!,
    tracing,
    close,
  };
}

/** How `migrate` runs under this configuration: its lock timeout and budget, retries logged. */
export function migrateOptions(config: Config, logger: AppLogger, budgetMs = config.migrationTimeoutMs) {
  return {
    lockTimeoutMs: config.migrationLockTimeoutMs,
    budgetMs,
    onRetry: (event: { version: number; name: string; attempt: number; err: string }) =>
      logger.warn({ event: 'db.migration_lock_timeout', ...event }),
  };
}

/** The schema is behind the code and stayed behind for SCHEMA_WAIT: a message users can act on, no stack. */
export class SchemaBehindError extends Error {
  override readonly name = 'SchemaBehindError';
}

/** How often a process waiting for the schema looks again. */
const SCHEMA_POLL_MS = 1000;

/**
 * Resolves once the schema is at (or past: expand/contract, docs/design.md) the newest migration this build
 * carries; waits SCHEMA_WAIT for it, logging once, then throws SchemaBehindError.
 */
async function waitForSchema(pool: pg.Pool, config: Config, logger: AppLogger): Promise<void> {
  const needed = latestMigration();
  const deadline = Date.now() + config.schemaWaitMs;
  let logged = false;
  for (;;) {
    const version = await schemaVersion(pool);
    if (version >= needed) return;
    if (Date.now() >= deadline)
      throw new SchemaBehindError(
        `the database schema is at migration ${version}, this build needs ${needed}, and it did not catch up within ` +
          `SCHEMA_WAIT (${config.schemaWaitMs} ms). Migrations run once per deploy, not when a worker or scheduler ` +
          "starts: run `npm run migrate` (on AWS the deploy's Migrate step does), then start this process again.",
      );
    if (!logged) {
      logged = true;
      logger.warn(
        { event: 'db.schema_behind', version, needed, wait_ms: config.schemaWaitMs },
        'waiting for the migrations (npm run migrate, or the deploy) to bring the schema to this build',
      );
    }
    await new Promise((r) => setTimeout(r, Math.min(SCHEMA_POLL_MS, Math.max(1, deadline - Date.now()))));
  }
}

/** A worker id unique per process (never shared between replicas): host, pid and random bits. */
export function newWorkerId(kind: string): string {
  return `${kind}-${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
}
