/**
 * The fault suite's harness: real processes (the entry points users run) against the private servers, one
 * PostgreSQL database and Redis prefix per scenario, an HTTP client for the spawned API, and small timing helpers.
 */
import type { QueueAdapter } from '@jobs/core';
import { createQueue, type Queue } from '@jobs/queue';
import { createPostgresQueue } from '@jobs/queue-postgres';
import { createStore, migrate, type Store } from '@jobs/store';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { sleep, type Servers } from './servers';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export { sleep };

/** Timing knobs shared by every scenario (short, so faults are detected and repaired within seconds). */
export const TIMING = {
  leaseMs: 2000,
  scheduleIntervalMs: 500,
  reconcileIntervalMs: 1000,
};

function baseEnv(): Record<string, string> {
  return {
    LEASE_TIMEOUT: `${TIMING.leaseMs}ms`,
    SCHEDULE_INTERVAL: `${TIMING.scheduleIntervalMs}ms`,
    RECONCILE_INTERVAL: `${TIMING.reconcileIntervalMs}ms`,
    HANDLERS_MODULE: 'test/fixtures/handlers.ts',
    SHUTDOWN_GRACE: '10s',
    WORKER_CONCURRENCY: '8',
    LOG_LEVEL: 'info',
  };
}

// ---------------------------------------------------------------- processes

export interface LogLine {
  raw: string;
  json: Record<string, unknown> | null;
}

/** A spawned entry point (`node --import tsx functions/<x>.ts`): one OS process, so a signal hits the real thing. */
export class Proc {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exitInfo: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  /** Lines kept for assertions: only those matching `keep` (everything goes to the log file). */
  readonly kept: LogLine[] = [];
  private readonly watchers = new Set<{ pattern: RegExp; resolve: (line: LogLine) => void }>();
  private readonly log: WriteStream;
  private partial = '';

  constructor(
    readonly name: string,
    script: string,
    env: Record<string, string>,
    logDir: string,
    private readonly keep: RegExp = /"event":"(worker\.started|api\.listening|execution\.outcome_rejected|execution\.lease_lost|http\.unhandled_error|clock\.skew|worker\.stopped|local\.stopped|scheduler\.started)"/,
  ) {
    mkdirSync(logDir, { recursive: true });
    this.log = createWriteStream(join(logDir, `${name}.log`));
    this.child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, script)], {
      cwd: ROOT,
      env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    LIVE.add(this);
    const onData = (chunk: Buffer) => {
      this.log.write(chunk);
      const text = this.partial + chunk.toString();
      const lines = text.split('\n');
      this.partial = lines.pop() ?? '';
      for (const raw of lines) this.onLine(raw);
    };
    this.child.stdout!.on('data', onData);
    this.child.stderr!.on('data', onData);
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        LIVE.delete(this);
        this.exitInfo = { code, signal };
        if (this.partial) this.onLine(this.partial);
        this.log.end();
        resolve({ code, signal });
      }),
    );
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.exitInfo === null;
  }

  private onLine(raw: string): void {
    const watching = this.watchers.size > 0;
    if (!watching && !this.keep.test(raw)) return;
    let json: Record<string, unknown> | null = null;
    try {
      json = raw.startsWith('{') ? (JSON.parse(raw) as Record<string, unknown>) : null;
    } catch {
      json = null;
    }
    const line = { raw, json };
    if (this.keep.test(raw)) this.kept.push(line);
    for (const w of [...this.watchers]) {
      if (w.pattern.test(raw)) {
        this.watchers.delete(w);
        w.resolve(line);
      }
    }
  }

  /** The first line (kept or future) matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs = 30_000): Promise<LogLine> {
    const seen = this.kept.find((l) => pattern.test(l.raw));
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const watcher = {
        pattern,
        resolve: (line: LogLine) => {
          clearTimeout(timer);
          resolve(line);
        },
      };
      const timer = setTimeout(() => {
        this.watchers.delete(watcher);
        reject(
          new Error(
            `${this.name}: no line matching ${pattern} within ${timeoutMs} ms (exit: ${JSON.stringify(this.exitInfo)})`,
          ),
        );
      }, timeoutMs);
      this.watchers.add(watcher);
      void this.exited.then(() => {
        if (!this.watchers.has(watcher)) return;
        this.watchers.delete(watcher);
        clearTimeout(timer);
        reject(new Error(`${this.name} exited (${JSON.stringify(this.exitInfo)}) before a line matching ${pattern}`));
      });
    });
  }

  events(name: string): Record<string, unknown>[] {
    return this.kept.filter((l) => l.json?.event === name).map((l) => l.json!);
  }

  signal(signal: NodeJS.Signals): void {
    if (this.alive) this.child.kill(signal);
  }

  async kill(): Promise<void> {
    this.signal('SIGKILL');
    await this.exited;
  }
}

/** Every process still running, so run.ts can SIGKILL them (by pid) on failure or interrupt. */
const LIVE = new Set<Proc>();

export function killAllLive(): void {
  for (const p of LIVE) {
    try {
      // SIGCONT first: a SIGSTOPped process would otherwise not die until continued on some kernels' accounting.
      p.child.kill('SIGCONT');
      p.child.kill('SIGKILL');
    } catch {
      // gone
    }
  }
}

// ---------------------------------------------------------------- scenario environment

export interface Scenario {
  name: string;
  servers: Servers;
  database: string;
  prefix: string;
  databaseUrl: string;
  redisUrl: string;
  /** The harness's own connections (they survive server restarts: errors are swallowed, queries retried). */
  pool: pg.Pool;
  redis: Redis;
  store: Store;
  /** Where the scenario's processes queue: Redis, or the PostgreSQL queue (QUEUE_BACKEND=postgres). */
  backend: 'redis' | 'postgres';
  queue: QueueAdapter;
  /** The Redis queue, for scenarios that look at its keys (null on the PostgreSQL queue). */
  redisQueue: Queue | null;
  logDir: string;
  procs: Proc[];
  env(extra?: Record<string, string>): Record<string, string>;
  spawn(kind: 'worker' | 'scheduler' | 'local', extra?: Record<string, string>, name?: string): Proc;
  worker(extra?: Record<string, string>): Promise<Proc & { workerId: string }>;
  api(extra?: Record<string, string>): Promise<{ proc: Proc; client: ApiClient }>;
  /** A query that waits out a restarting database (retries for up to `timeoutMs`). */
  q<T = any>(sql: string, params?: unknown[], timeoutMs?: number): Promise<T[]>;
  close(): Promise<void>;
}

const SCRIPTS = {
  worker: 'functions/worker-process.ts',
  scheduler: 'functions/scheduler-process.ts',
  local: 'functions/local.ts',
} as const;

export async function createScenario(
  servers: Servers,
  name: string,
  logRoot: string,
  backend: 'redis' | 'postgres' = 'redis',
): Promise<Scenario> {
  const database = `faults_${name.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: servers.pg.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const databaseUrl = servers.pg.urlFor(database);
  const redisUrl = servers.redis.url;
  const prefix = `{${database}}`;
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 6, connectionTimeoutMillis: 5000 });
  pool.on('error', () => undefined);
  await migrate(pool);
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2, retryStrategy: (n) => Math.min(n * 100, 1000) });
  redis.on('error', () => undefined);
  const redisQueue = backend === 'redis' ? createQueue(redis, { prefix }) : null;
  const queue: QueueAdapter = redisQueue ?? createPostgresQueue(pool);
  const logDir = join(logRoot, backend === 'redis' ? name : `${name}-pg-queue`);
  const procs: Proc[] = [];
  let counter = 0;

  const scenario: Scenario = {
    name,
    servers,
    database,
    prefix,
    databaseUrl,
    redisUrl,
    pool,
    redis,
    store: createStore(pool),
    backend,
    queue,
    redisQueue,
    logDir,
    procs,
    env: (extra = {}) => ({
      ...baseEnv(),
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: prefix,
      QUEUE_BACKEND: backend,
      ...extra,
    }),
    spawn(kind, extra = {}, procName) {
      const proc = new Proc(procName ?? `${kind}-${++counter}`, SCRIPTS[kind], scenario.env(extra), logDir);
      procs.push(proc);
      return proc;
    },
    async worker(extra = {}) {
      const proc = scenario.spawn('worker', extra);
      const line = await proc.waitFor(/"event":"worker\.started"/);
      return Object.assign(proc, { workerId: String(line.json?.worker_id) });
    },
    async api(extra = {}) {
      const proc = scenario.spawn('local', { HTTP_PORT: '0', ...extra }, `api-${++counter}`);
      const line = await proc.waitFor(/"event":"api\.listening"/);
      const key = (extra.API_KEYS ?? '').split(',')[0] || null;
      return { proc, client: new ApiClient(`http://127.0.0.1:${line.json?.port}`, key) };
    },
    async q(sql, params = [], timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        try {
          return (await pool.query(sql, params as unknown[])).rows;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await sleep(200);
        }
      }
    },
    async close() {
      killAllOf(procs);
      await Promise.all(procs.map((p) => p.exited));
      await queue.close();
      redis.disconnect();
      await pool.end().catch(() => undefined);
    },
  };
  return scenario;
}

function killAllOf(procs: Proc[]): void {
  for (const p of procs) {
    if (!p.alive) continue;
    p.child.kill('SIGCONT');
    p.child.kill('SIGKILL');
  }
}

// ---------------------------------------------------------------- HTTP

export interface ApiResponse {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

export class ApiClient {
  constructor(
    readonly base: string,
    readonly key: string | null,
  ) {}

  async request(
    method: string,
    path: string,
    options: {
      body?: unknown;
      raw?: string | Uint8Array;
      headers?: Record<string, string>;
      timeoutMs?: number;
      auth?: boolean;
    } = {},
  ): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (this.key && options.auth !== false && !Object.keys(headers).some((h) => h.toLowerCase() === 'authorization')) {
      headers.authorization = `Bearer ${this.key}`;
    }
    let body: string | Uint8Array | undefined = options.raw;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(this.base + path, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
    });
    const text = await res.text();
    let parsed: any = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    return { status: res.status, body: parsed, text, headers: res.headers };
  }

  async createJob(spec: Record<string, unknown>): Promise<{ id: string }> {
    const res = await this.request('POST', '/api/v1/jobs', { body: spec });
    if (res.status !== 201) throw new Error(`create job: ${res.status} ${res.text.slice(0, 300)}`);
    return res.body;
  }
}

// ---------------------------------------------------------------- load

export interface Ack {
  root: string;
  jobId: string;
  at: number;
}

/**
 * Triggers jobs through the API at about `ratePerSec` until stopped. An execution is acknowledged when its trigger
 * got a 2xx; refused requests (e.g. while PostgreSQL is down) are counted, never retried blindly.
 */
export function startLoad(
  client: ApiClient,
  pick: () => { jobId: string; payload?: unknown },
  options: { ratePerSec: number; concurrency?: number },
) {
  const acks: Ack[] = [];
  const refused: Record<string, number> = {};
  let stopped = false;
  let inFlight = 0;
  const concurrency = options.concurrency ?? 8;
  const intervalMs = 1000 / options.ratePerSec;
  const one = async () => {
    const { jobId, payload } = pick();
    inFlight++;
    try {
      const res = await client.request('POST', `/api/v1/jobs/${jobId}/trigger`, {
        body: payload === undefined ? {} : { payload },
        timeoutMs: 20_000,
      });
      if (res.status >= 200 && res.status < 300)
        acks.push({ root: String(res.body.root_id ?? res.body.id), jobId, at: Date.now() });
      else refused[res.status] = (refused[res.status] ?? 0) + 1;
    } catch (error) {
      const key = (error as Error).name === 'TimeoutError' ? 'timeout' : 'network';
      refused[key] = (refused[key] ?? 0) + 1;
    } finally {
      inFlight--;
    }
  };
  const pending = new Set<Promise<void>>();
  const loop = (async () => {
    let next = Date.now();
    while (!stopped) {
      if (inFlight < concurrency) {
        const p = one();
        pending.add(p);
        void p.finally(() => pending.delete(p));
      }
      next += intervalMs;
      const wait = next - Date.now();
      if (wait > 0) await sleep(wait);
      else if (wait < -1000) next = Date.now();
    }
  })();
  return {
    acks,
    refused,
    async stop() {
      stopped = true;
      await loop;
      await Promise.all([...pending]);
    },
  };
}

/** Triggers `n` executions as fast as `concurrency` allows; returns the acknowledged ones. */
export async function triggerMany(
  client: ApiClient,
  pick: () => { jobId: string; payload?: unknown },
  n: number,
  concurrency = 16,
): Promise<Ack[]> {
  const acks: Ack[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        const { jobId, payload } = pick();
        try {
          const res = await client.request('POST', `/api/v1/jobs/${jobId}/trigger`, {
            body: payload === undefined ? {} : { payload },
          });
          if (res.status >= 200 && res.status < 300)
            acks.push({ root: String(res.body.root_id ?? res.body.id), jobId, at: Date.now() });
        } catch {
          // not acknowledged
        }
      }
    }),
  );
  return acks;
}

/** Polls until `check` returns a truthy value; returns it, or null after `timeoutMs`. */
export async function waitUntil<T>(
  check: () => Promise<T | null | undefined | false>,
  timeoutMs: number,
  everyMs = 100,
): Promise<T | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch {
      // retry
    }
    if (Date.now() > deadline) return null;
    await sleep(everyMs);
  }
}

export function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function seconds(ms: number | null): string {
  return ms === null ? '-' : `${(ms / 1000).toFixed(2)}s`;
}

/** A small seeded PRNG (mulberry32), so a run's random kill times and loads can be replayed with FAULTS_SEED. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
