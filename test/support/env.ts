/**
 * Test isolation: each call makes its own PostgreSQL schema (migrated) and Redis key prefix, on the real local
 * servers, and `cleanup()` drops both. Nothing depends on what another test or an earlier run left behind.
 * TEST_QUEUE_BACKEND=postgres (the `postgres` project in test/vitest.config.ts) puts the queue on PostgreSQL: the
 * same test files then run against the second adapter, and their child processes get QUEUE_BACKEND=postgres.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { createQueue, type Queue } from '@jobs/queue';
import { createPostgresQueue } from '@jobs/queue-postgres';
import { createStore, migrate, type Store } from '@jobs/store';
import {
  restoreFlow,
  type Clock,
  type Logger,
  type QueueAdapter,
  type Transition,
  type TransitionSink,
} from '@jobs/core';

export const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export type QueueBackend = 'redis' | 'postgres';
export const QUEUE_BACKEND: QueueBackend = process.env.TEST_QUEUE_BACKEND === 'postgres' ? 'postgres' : 'redis';

export interface TestEnv {
  schema: string;
  prefix: string;
  pool: pg.Pool;
  redis: Redis;
  store: Store;
  backend: QueueBackend;
  queue: QueueAdapter;
  /** The Redis queue, for tests that look at its keys (null on the PostgreSQL queue). */
  redisQueue: Queue | null;
  /** Environment for child processes that must use the same schema and prefix. */
  childEnv: Record<string, string>;
  cleanup(): Promise<void>;
}

export function uniqueName(label: string): string {
  return `${label}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/** The database URL that selects `schema` through the search_path startup option. */
export function schemaUrl(schema: string, base = DATABASE_URL): string {
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

export async function createTestEnv(label = 't', options: { backend?: QueueBackend } = {}): Promise<TestEnv> {
  const backend = options.backend ?? QUEUE_BACKEND;
  const schema = uniqueName(label).toLowerCase();
  const prefix = `{${schema}}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: schemaUrl(schema), max: 10 });
  pool.on('error', () => undefined);
  await migrate(pool);
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  const redisQueue = backend === 'redis' ? createQueue(redis, { prefix }) : null;
  const queue: QueueAdapter = redisQueue ?? createPostgresQueue(pool);
  const store = createStore(pool);
  // As a running deployment has it: the flow state restored once (a fresh prefix has none; a worker would restore it
  // at its first claim, test/flow tests that path on purpose).
  await restoreFlow({ store, queue, logger: { debug() {}, info() {}, warn() {}, error() {} } });
  return {
    schema,
    prefix,
    pool,
    redis,
    store,
    backend,
    queue,
    redisQueue,
    childEnv: {
      DATABASE_URL: schemaUrl(schema),
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      QUEUE_BACKEND: backend,
    },
    async cleanup() {
      await queue.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
      await pool.end();
      const c = new pg.Client({ connectionString: DATABASE_URL });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}

/** Collects transitions and log lines in memory, for assertions. */
export function recorder() {
  const transitions: Transition[] = [];
  const logs: { level: string; obj: object; msg?: string }[] = [];
  const sink: TransitionSink = { emit: (ts) => void transitions.push(...ts) };
  const at = (level: string) => (obj: object, msg?: string) => void logs.push({ level, obj, msg });
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return { transitions, logs, sink, logger };
}

/** A clock tests move by hand. */
export function manualClock(start: Date | string): Clock & { set(t: Date | string): void; advance(ms: number): void } {
  let now = new Date(start);
  return {
    now: () => new Date(now),
    set: (t) => void (now = new Date(t)),
    advance: (ms) => void (now = new Date(now.getTime() + ms)),
  };
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes. */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 10_000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as T;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
