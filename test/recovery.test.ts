/** Crash recovery with real worker processes: SIGKILL mid-job, stale tokens, lost Redis state, SIGTERM. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJob, LANES, reapOnce, redeliveryDue, triggerJob, type Outcome } from '@jobs/core';
import { createTestEnv, eventually, type TestEnv } from './support/env';
import { engine } from './support/engine';
import { jobSpec } from './support/fixtures';
import { spawnEntry, type Child } from './support/processes';
import { expireLease, loseQueuedIds } from './support/queue-probe';

let env: TestEnv;
let e: ReturnType<typeof engine>;
const children: Child[] = [];

beforeEach(async () => {
  env = await createTestEnv('recovery');
  e = engine(env);
});
afterEach(async () => {
  for (const c of children.splice(0)) {
    c.kill('SIGKILL');
    await c.exited;
  }
  await e.stopAll();
  await env.cleanup();
});

function workerProcess(extra: Record<string, string> = {}) {
  const child = spawnEntry('functions/worker-process.ts', {
    ...env.childEnv,
    HANDLERS_MODULE: 'test/fixtures/handlers.ts',
    LEASE_TIMEOUT: '1500ms',
    WORKER_CONCURRENCY: '4',
    ...extra,
  });
  children.push(child);
  return child;
}

describe('crash recovery', () => {
  it('re-runs the attempt of a worker process killed with SIGKILL mid-job, recording exactly one success', async () => {
    const job = await createJob(e.deps, jobSpec({ handler: 'nap', payload: { ms: 800 }, maxRetries: 3 }));
    const first = workerProcess();
    await first.waitFor(/worker\.started/);
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    await eventually(async () => (await env.store.executionGet(execution.id))?.status === 'running');
    first.kill('SIGKILL');
    await first.exited;

    const second = workerProcess();
    await second.waitFor(/worker\.started/);
    // The reaper (run here as the scheduler would) fails the orphaned attempt once its lease (1.5 s) passes.
    const killedAt = Date.now();
    const recovered = await eventually(
      async () => {
        const r = await e.reap();
        return r.expired > 0 ? r : null;
      },
      10_000,
      100,
    );
    expect(recovered.expired).toBe(1);
    expect(Date.now() - killedAt).toBeLessThan(5000);

    const chain = await eventually(async () => {
      const list = await env.store.executionList({ jobId: job.id, limit: 10 });
      return list.some((x) => x.status === 'succeeded') ? list.reverse() : null;
    });
    expect(chain.map((x) => [x.attempt, x.status])).toEqual([
      [1, 'failed'],
      [2, 'succeeded'],
    ]);
    expect(chain[0]!.error).toMatch(/lease expired/);
    const { rows } = await env.pool.query(`SELECT count(*)::int AS n FROM executions WHERE status = 'succeeded'`);
    expect(rows[0].n).toBe(1);
  });

  it('ends a job that kills its worker every time dead, after its retries, without blocking other jobs', async () => {
    const poison = await createJob(e.deps, jobSpec({ handler: 'crash', maxRetries: 1 }));
    const healthy = await createJob(e.deps, jobSpec({ handler: 'noop' }));
    const { execution } = await triggerJob(e.deps, { jobId: poison.id });
    const fine = [];
    let crashes = 0;
    for (let round = 0; round < 12; round++) {
      fine.push((await triggerJob(e.deps, { jobId: healthy.id })).execution.id);
      const worker = workerProcess({ LEASE_TIMEOUT: '1s', WORKER_CONCURRENCY: '1' });
      const exit = await Promise.race([worker.exited, new Promise((r) => setTimeout(r, 4000, null))]);
      if (exit) crashes++;
      else {
        worker.kill('SIGTERM');
        await worker.exited;
      }
      await new Promise((r) => setTimeout(r, 1100)); // let the Redis lease of the crashed claim expire
      await e.reap();
      const chain = await env.store.executionList({ jobId: poison.id, limit: 10 });
      if (chain.some((x) => x.status === 'dead')) break;
    }
    const chain = (await env.store.executionList({ jobId: poison.id, limit: 10 })).reverse();
    expect(chain.map((x) => [x.attempt, x.status])).toEqual([
      [1, 'failed'],
      [2, 'dead'],
    ]);
    expect(chain[0]!.retryOf).toBeNull();
    expect(chain[0]!.id).toBe(execution.id);
    expect(chain[1]!.error).toMatch(/worker lost \d times before the attempt's start was recorded/);
    expect(crashes).toBeGreaterThanOrEqual(2);
    // The healthy job's runs were not held up by the poison one.
    const worker = workerProcess();
    await worker.waitFor(/worker\.started/);
    await eventually(async () => {
      const { rows } = await env.pool.query(
        `SELECT count(*)::int AS n FROM executions WHERE job_id = $1 AND status = 'succeeded'`,
        [healthy.id],
      );
      return rows[0].n === fine.length;
    });
  }, 90_000);

  it('delivers a claim whose worker was lost again after a random wait of up to one lease per loss, behind what waits', async () => {
    const job = await createJob(e.deps, jobSpec({ handler: 'noop' }));
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    const lane = execution.lane;
    const reap = () => reapOnce({ ...e.deps, random: () => 0.5 }, { lanes: LANES, leaseMs: 2000 });
    for (const [deliveries, waitMs] of [
      [1, 1000],
      [2, 2000],
    ] as const) {
      // From its second delivery on it is a suspect, claimed only by a worker with nothing in flight.
      const { claims } = await env.queue.claim({ lane, count: 1, leaseMs: 60_000, idle: true });
      expect(claims.map((c) => c.id)).toEqual([execution.id]);
      await expireLease(env, lane, execution.id); // the worker died before it recorded the start
      const reapedAt = Date.now();
      expect((await reap()).requeued).toBe(1);
      // Not deliverable before its wait (half of the lease per loss, with random() = 0.5)...
      const early = await env.queue.claim({ lane, count: 10, leaseMs: 60_000 });
      expect(early.claims).toEqual([]);
      expect(early.nextDueAt!.getTime() - reapedAt).toBeGreaterThan(waitMs - 500);
      expect(early.nextDueAt!.getTime() - reapedAt).toBeLessThan(waitMs + 500);
      // ...and then delivered again, counted as its next delivery.
      await new Promise((r) => setTimeout(r, early.nextDueAt!.getTime() - Date.now() + 50));
      if (deliveries === 2) {
        const { claims: again } = await env.queue.claim({ lane, count: 1, leaseMs: 60_000, idle: true });
        expect(again.map((c) => c.id)).toEqual([execution.id]);
      }
    }
    expect((await env.store.executionGet(execution.id))?.status).toBe('queued');
  });

  it('spreads redeliveries over up to one lease per loss, never earlier than due and never over 5 minutes', () => {
    const due = new Date(1_000_000);
    expect(redeliveryDue(due, 2_000_000, undefined, 1, () => 0.9)).toBe(due);
    expect(redeliveryDue(due, 2_000_000, 30_000, 1, () => 0.5).getTime()).toBe(2_015_000);
    expect(redeliveryDue(due, 2_000_000, 30_000, 2, () => 0.5).getTime()).toBe(2_030_000);
    expect(redeliveryDue(due, 2_000_000, 30_000, 100, () => 0.99).getTime()).toBe(2_300_000);
    expect(redeliveryDue(new Date(9_000_000), 2_000_000, 30_000, 1, () => 0.5).getTime()).toBe(9_000_000);
  });

  it('rejects a late completion carrying a stale lease token', async () => {
    const job = await createJob(e.deps, jobSpec({ maxRetries: 1 }));
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    const { claims } = await env.queue.claim({ lane: 'short', count: 1, leaseMs: 60_000 });
    const started = await env.store.executionsStart({ workerId: 'w1', leaseMs: 60_000, claims });
    expect(started.started.map((s) => s.id)).toEqual([execution.id]);
    // The lease expires in the database and the reaper records the attempt as failed.
    await env.pool.query(`UPDATE executions SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [
      execution.id,
    ]);
    // ...and in the queue (its worker stopped heartbeating both): a queue lease still held would mean a live worker.
    await expireLease(env, 'short', execution.id);
    expect((await e.reap()).expired).toBe(1);

    const late: Outcome = {
      id: execution.id,
      token: claims[0]!.token,
      jobId: job.id,
      attempt: 1,
      lane: 'short',
      priority: 0,
      status: 'succeeded',
      exitCode: 0,
      output: 'late',
      error: null,
      durationMs: 5,
      retryDelayMs: null,
      workerId: 'w1',
    };
    const result = await env.store.executionsFinish([late]);
    expect(result.recorded).toEqual([]);
    expect(result.rejected.map((r) => r.id)).toEqual([execution.id]);
    const row = await env.store.executionGet(execution.id);
    expect(row).toMatchObject({ status: 'failed', output: null });
    expect(row!.error).toMatch(/lease expired/);
    // A forged token is rejected the same way.
    expect((await env.store.executionsFinish([{ ...late, token: 'forged' }])).recorded).toEqual([]);
  });

  it('restores every queued execution after Redis loses the queue (reconciler), without duplicates', async () => {
    const job = await createJob(e.deps, jobSpec());
    const created = await env.store.executionsEnqueueMany({
      jobId: job.id,
      payloads: Array.from({ length: 250 }, (_, i) => ({ i })),
    });
    await env.queue.push(created);
    // One is claimed and held by a worker: the reconciler must not push it a second time.
    const { claims } = await env.queue.claim({ lane: 'short', count: 1, leaseMs: 60_000 });
    expect((await e.reconcile()).pushed).toBe(0);

    // Lose everything this deployment had in Redis (FLUSHALL on a shared server, scoped to our prefix here).
    await loseQueuedIds(env);
    expect((await env.queue.depth()).short.ready).toBe(0);

    const reconciled = await e.reconcile();
    expect(reconciled).toEqual({ scanned: 250, pushed: 250 });
    expect((await e.reconcile()).pushed).toBe(0);
    expect((await env.queue.depth()).short.ready).toBe(250);

    await e.worker({ concurrency: 20 });
    await eventually(async () => {
      const { rows } = await env.pool.query(`SELECT count(*)::int AS n FROM executions WHERE status = 'succeeded'`);
      return rows[0].n === 250;
    });
    const { rows } = await env.pool.query(`SELECT count(*)::int AS n, count(DISTINCT id)::int AS d FROM executions`);
    expect(rows[0]).toEqual({ n: 250, d: 250 });
    void claims;
  });

  it('lets in-flight work finish on SIGTERM, then exits with nothing left leased', async () => {
    const job = await createJob(e.deps, jobSpec({ handler: 'nap', payload: { ms: 1500 } }));
    const worker = workerProcess({ SHUTDOWN_GRACE: '10s' });
    await worker.waitFor(/worker\.started/);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await triggerJob(e.deps, { jobId: job.id })).execution.id);
    await eventually(async () => {
      const { rows } = await env.pool.query(`SELECT count(*)::int AS n FROM executions WHERE status = 'running'`);
      return rows[0].n === 3;
    });
    worker.kill('SIGTERM');
    const exit = await worker.exited;
    expect(exit.code).toBe(0);
    for (const id of ids) expect((await env.store.executionGet(id))?.status).toBe('succeeded');
    expect((await env.queue.depth()).short.running).toBe(0);
    const { rows } = await env.pool.query(`SELECT count(*)::int AS n FROM workers`);
    expect(rows[0].n).toBe(0);
  });

  it('gives back attempts still running when the shutdown grace period ends', async () => {
    const job = await createJob(e.deps, jobSpec({ handler: 'nap', payload: { ms: 20_000 } }));
    const worker = workerProcess({ SHUTDOWN_GRACE: '300ms' });
    await worker.waitFor(/worker\.started/);
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    await eventually(async () => (await env.store.executionGet(execution.id))?.status === 'running');
    worker.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
    const row = await env.store.executionGet(execution.id);
    expect(row).toMatchObject({ status: 'queued', attempt: 1, workerId: null });
    expect((await env.queue.depth()).short).toMatchObject({ ready: 1, running: 0 });
  });
});
