/** Our engine under test: a job, bulk-enqueued executions, a real worker process, and completion tracking. */
import { createJob, type CommandDeps, type Logger, type TransitionSink } from '@jobs/core';
import { jobSpec } from '../../support/fixtures';
import type { TestEnv } from '../../support/env';
import { spawnNode, type Spawned } from './proc';
import { sleep } from './stats';

const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const nullSink: TransitionSink = { emit() {} };

export function commandDeps(env: TestEnv): CommandDeps {
  return { store: env.store, queue: env.queue, clock: { now: () => new Date() }, sink: nullSink, logger: silentLogger };
}

export async function noopJob(env: TestEnv, overrides: Parameters<typeof jobSpec>[0] = {}): Promise<string> {
  const job = await createJob(commandDeps(env), jobSpec({ handler: 'noop', ...overrides }));
  return job.id;
}

/** N executions of one job, inserted and pushed in batches (the bulk-enqueue path of the library). */
export async function enqueueBulk(env: TestEnv, jobId: string, n: number, batch = 1000): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += batch) {
    const created = await env.store.executionsEnqueueMany({
      jobId,
      payloads: Array.from({ length: Math.min(batch, n - i) }, () => null),
    });
    await env.queue.push(created);
    for (const c of created) ids.push(c.id);
  }
  return ids;
}

/** Executions of several jobs, inserted in batches of 1,000 taken from each job in turn, and pushed. */
export async function enqueueInterleaved(
  env: TestEnv,
  parts: { jobId: string; n: number; payload: (i: number) => unknown }[],
): Promise<void> {
  const done = parts.map(() => 0);
  while (parts.some((p, i) => done[i]! < p.n)) {
    for (const [i, part] of parts.entries()) {
      const count = Math.min(1000, part.n - done[i]!);
      if (count <= 0) continue;
      const payloads = Array.from({ length: count }, (_, k) => part.payload(done[i]! + k));
      const created = await env.store.executionsEnqueueMany({ jobId: part.jobId, payloads });
      await env.queue.push(created);
      done[i]! += count;
    }
  }
}

export interface WorkerProcessOptions {
  concurrency: number;
  logLevel: 'warn' | 'info' | 'debug' | 'silent';
  nodeArgs?: string[];
  extraEnv?: Record<string, string>;
}

/** `functions/worker-process.ts` (= `npm run worker`) as one OS process; stdout goes to /dev/null. */
export function spawnWorker(env: TestEnv, o: WorkerProcessOptions): Spawned {
  return spawnNode(
    'functions/worker-process.ts',
    {
      ...env.childEnv,
      WORKER_CONCURRENCY: String(o.concurrency),
      LOG_LEVEL: o.logLevel,
      SHUTDOWN_GRACE: '10s',
      ...o.extraEnv,
    },
    { stdout: 'ignore', nodeArgs: o.nodeArgs },
  );
}

/** Resolves once the worker registered itself (its row in `workers`), i.e. its claim loop is about to start. */
export async function waitRegistered(env: TestEnv, worker: Spawned, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await env.pool.query(`SELECT count(*)::int AS n FROM workers`);
    if (rows[0].n > 0) return;
    if (worker.child.exitCode !== null)
      throw new Error(`worker exited early (${worker.child.exitCode}):\n${worker.output()}`);
    if (Date.now() > deadline) throw new Error(`worker did not register within ${timeoutMs} ms:\n${worker.output()}`);
    await sleep(20);
  }
}

/**
 * Waits until no execution is live (queued, retrying or running). Gives up when nothing moved for `stallMs`
 * (reported as a failure by the caller's checks, not thrown away).
 */
export async function waitNoLive(
  env: TestEnv,
  worker: Spawned | null,
  stallMs = 60_000,
  everyMs = 100,
): Promise<{ stalled: boolean }> {
  let last = -1;
  let lastChange = Date.now();
  for (;;) {
    const { rows } = await env.pool.query(
      `SELECT count(*)::int AS n FROM executions WHERE status IN ('queued', 'retrying', 'running')`,
    );
    const live = rows[0].n as number;
    if (live === 0) return { stalled: false };
    if (live !== last) {
      last = live;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > stallMs) {
      return { stalled: true };
    }
    if (worker && worker.child.exitCode !== null) return { stalled: true };
    await sleep(everyMs);
  }
}

/** The drain window by the database clock: first start to last recorded success. */
export async function dbWindow(env: TestEnv): Promise<{ seconds: number; first: Date; last: Date }> {
  const { rows } = await env.pool.query(
    `SELECT min(started_at) AS first, max(finished_at) AS last,
            extract(epoch FROM max(finished_at) - min(started_at))::float8 AS seconds
     FROM executions WHERE status = 'succeeded'`,
  );
  return { seconds: rows[0].seconds, first: rows[0].first, last: rows[0].last };
}
