/**
 * @module context — wiring: builds the logger, pool, Redis client, store, queue and sinks once per process.
 * Entry points (local stack, worker, scheduler, Lambda handlers) take what they need from here.
 */
import { systemClock, type Clock, type TransitionSink } from '@jobs/core';
import { createQueue, type Queue, type RedisClient } from '@jobs/queue';
import { createStore, migrate, type Store } from '@jobs/store';
import type pg from 'pg';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { loadConfig, type Config } from './config';
import { createEventPublisher } from './events';
import { createLogger, fanOut, logSink, type AppLogger } from './logger';
import { checkServices, createPool, createRedis } from './resources';

export interface Context {
  config: Config;
  logger: AppLogger;
  pool: pg.Pool;
  redis: RedisClient;
  store: Store;
  queue: Queue;
  sink: TransitionSink;
  clock: Clock;
  close(): Promise<void>;
}

export interface ContextOptions {
  config?: Config;
  logger?: AppLogger;
  poolMax?: number;
  /** Check both services answer before returning (processes do; Lambda handlers skip it to save a round trip). */
  check?: boolean;
  /** Apply migrations before returning. */
  migrate?: boolean;
  clock?: Clock;
}

export async function createContext(options: ContextOptions = {}): Promise<Context> {
  const config = options.config ?? loadConfig();
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const pool = createPool(config, { max: options.poolMax ?? 10, logger });
  const redis = createRedis(config, logger);
  const close = async () => {
    await publisher?.close();
    await queue.close();
    redis.disconnect();
    await pool.end().catch(() => undefined);
  };
  const queue = createQueue(redis, { prefix: config.queuePrefix });
  const publisher = config.eventBusName ? createEventPublisher({ busName: config.eventBusName, logger }) : null;
  try {
    if (options.check ?? true) await checkServices(pool, redis, config);
    if (options.migrate) {
      const applied = await migrate(pool);
      if (applied.length > 0) logger.info({ event: 'db.migrated', versions: applied });
    }
  } catch (error) {
    await close();
    throw error;
  }
  return {
    config,
    logger,
    pool,
    redis,
    store: createStore(pool),
    queue,
    sink: publisher ? fanOut(logSink(logger), publisher) : logSink(logger),
    clock: options.clock ?? systemClock,
    close,
  };
}

/** A worker id unique per process (never shared between replicas): host, pid and random bits. */
export function newWorkerId(kind: string): string {
  return `${kind}-${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
}
