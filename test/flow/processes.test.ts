/**
 * Flow control with real worker processes (`npm run worker`, two of them, 8 slots each): limits hold across
 * processes because they are taken in the queue, not in a worker.
 */
import { createJob, setLanePaused, triggerJob, type Job } from '@jobs/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine } from '../support/engine';
import { createTestEnv, eventually, type TestEnv } from '../support/env';
import { jobSpec } from '../support/fixtures';
import { spawnEntry, type Child } from '../support/processes';
import { limits, maxOverlap, maxStartsInWindow, runsOf } from './support';
import { limitedReady } from '../support/queue-probe';

let env: TestEnv;
let e: ReturnType<typeof engine>;
const workers: Child[] = [];

beforeAll(async () => {
  env = await createTestEnv('flowproc');
  e = engine(env);
  for (let i = 0; i < 2; i++) {
    const child = spawnEntry('functions/worker-process.ts', {
      ...env.childEnv,
      HANDLERS_MODULE: 'test/fixtures/handlers.ts',
      WORKER_CONCURRENCY: '8',
      SHUTDOWN_GRACE: '500ms',
    });
    workers.push(child);
  }
  await Promise.all(workers.map((w) => w.waitFor(/worker\.started/)));
}, 60_000);
afterAll(async () => {
  for (const w of workers) w.kill('SIGKILL');
  await Promise.all(workers.map((w) => w.exited));
  await env.cleanup();
});

const trigger = (job: Job, payloads: unknown[]) =>
  Promise.all(payloads.map((payload) => triggerJob(e.deps, { jobId: job.id, payload })));
const succeeded = (job: Job, n: number, timeoutMs = 30_000) =>
  eventually(
    async () => {
      const { rows } = await env.pool.query(
        `SELECT count(*)::int AS n FROM executions WHERE job_id = $1 AND status = 'succeeded'`,
        [job.id],
      );
      return rows[0].n >= n;
    },
    timeoutMs,
    50,
  );
const workersThatRan = async (job: Job) =>
  (await env.pool.query(`SELECT DISTINCT worker_id FROM executions WHERE job_id = $1`, [job.id])).rows.length;

describe('flow control across worker processes', () => {
  it('never overlaps more than max_concurrency: 2 attempts of 8 one-second ones, and does run 2 at once', async () => {
    const job = await createJob(e.deps, jobSpec({ handler: 'nap', limits: limits({ maxConcurrency: 2 }) }));
    await trigger(
      job,
      Array.from({ length: 8 }, () => ({ ms: 1000 })),
    );
    await succeeded(job, 8);
    const runs = await runsOf(env.pool, job.id);
    expect(maxOverlap(runs)).toBe(2);
    expect(await workersThatRan(job)).toBe(2);
  }, 60_000);

  it('holds a per-key limit per key while different keys run in parallel', async () => {
    const job = await createJob(
      e.deps,
      jobSpec({ handler: 'nap', limits: limits({ concurrencyKey: '/tenant', maxConcurrencyPerKey: 1 }) }),
    );
    await trigger(
      job,
      ['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c'].map((tenant) => ({ ms: 700, tenant })),
    );
    await succeeded(job, 9);
    const runs = await runsOf(env.pool, job.id);
    for (const tenant of ['a', 'b', 'c']) expect(maxOverlap(runs.filter((r) => r.key === tenant))).toBe(1);
    expect(maxOverlap(runs)).toBe(3);
  }, 60_000);

  it('starts no more than 3 in any 2-second window under a rate limit of 3 per 2 s', async () => {
    const job = await createJob(
      e.deps,
      jobSpec({ handler: 'noop', limits: limits({ rateLimit: { limit: 3, periodMs: 2000, perKey: false } }) }),
    );
    const t = Date.now();
    await trigger(
      job,
      Array.from({ length: 8 }, () => null),
    );
    await succeeded(job, 8);
    const runs = await runsOf(env.pool, job.id);
    // Starts are dated by PostgreSQL and judged by the Redis clock: allow for the few ms between the two.
    expect(maxStartsInWindow(runs, 2000 - 50)).toBe(3);
    expect(Date.now() - t).toBeGreaterThanOrEqual(4000);
  }, 60_000);

  it('pauses a lane: nothing starts while triggers are accepted, and everything runs once it resumes', async () => {
    const job = await createJob(e.deps, jobSpec({ handler: 'noop', lane: 'long' }));
    await setLanePaused(e.deps, 'long', true);
    const created = await trigger(job, [null, null, null]);
    await new Promise((r) => setTimeout(r, 1500));
    for (const c of created) expect((await env.store.executionGet(c.execution.id))?.status).toBe('queued');
    await setLanePaused(e.deps, 'long', false);
    await succeeded(job, 3, 5000);
  }, 30_000);

  it('starts an unlimited job within a second while 10,000 attempts of a limited job wait for a slot', async () => {
    const limited = await createJob(e.deps, jobSpec({ handler: 'nap', limits: limits({ maxConcurrency: 1 }) }));
    const free = await createJob(e.deps, jobSpec({ handler: 'noop' }));
    for (let i = 0; i < 10; i++) {
      const created = await env.store.executionsEnqueueMany({
        jobId: limited.id,
        payloads: Array.from({ length: 1000 }, () => ({ ms: 30_000 })),
      });
      await env.queue.push(created);
    }
    // The workers look at each waiting attempt once, park it, and do not look again until the running one ends.
    await eventually(
      async () => (await env.queue.flowInspect([limited.id]))[0]?.waiting.maxConcurrency === 9_999,
      30_000,
      100,
    );
    const t = Date.now();
    const { execution } = await triggerJob(e.deps, { jobId: free.id });
    await eventually(async () => (await env.store.executionGet(execution.id))?.status === 'succeeded', 5000, 5);
    expect(Date.now() - t).toBeLessThan(1000);
    // Nothing is re-examined in a loop meanwhile: the waiting attempts stay parked.
    const before = (await env.queue.flowInspect([limited.id]))[0]!;
    await new Promise((r) => setTimeout(r, 500));
    expect((await env.queue.flowInspect([limited.id]))[0]).toEqual(before);
    expect(await limitedReady(env, 'short')).toBe(0);
  }, 90_000);
});
