/**
 * Flow control against the queue ports, on the real PostgreSQL and Redis, with in-process workers: each behaviour
 * is stated once and run for every queue adapter in QUEUE_ADAPTERS (support.ts).
 */
import {
  LANES,
  createJob,
  limitsChanged,
  reapOnce,
  restoreFlow,
  setLanePaused,
  syncLimits,
  triggerJob,
  type Job,
} from '@jobs/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { engine } from '../support/engine';
import { createTestEnv, eventually, type TestEnv } from '../support/env';
import { jobSpec } from '../support/fixtures';
import { QUEUE_ADAPTERS, limits, maxOverlap, maxStartsInWindow, runsOf } from './support';
import { expireLease, limitedLeft } from '../support/queue-probe';

describe.each(QUEUE_ADAPTERS)('flow control ($name)', (adapter) => {
  let env: TestEnv;
  let e: ReturnType<typeof engine>;
  beforeEach(async () => {
    env = await createTestEnv('flow');
    e = engine({ ...env, queue: adapter.queue(env) });
  });
  afterEach(async () => {
    await e.stopAll();
    await env.cleanup();
  });

  const finished = (job: Job, n: number, timeoutMs = 20_000) =>
    eventually(async () => {
      const { rows } = await env.pool.query(
        `SELECT count(*)::int AS n FROM executions WHERE job_id = $1 AND status = 'succeeded'`,
        [job.id],
      );
      return rows[0].n >= n;
    }, timeoutMs);
  const trigger = (job: Job, payload: unknown, n = 1) =>
    Promise.all(Array.from({ length: n }, () => triggerJob(e.deps, { jobId: job.id, payload })));

  it('runs at most max_concurrency attempts of a job at once, across workers, and does run that many', async () => {
    const job = await createJob(e.deps, jobSpec({ handler: 'sleep', limits: limits({ maxConcurrency: 2 }) }));
    await Promise.all([e.worker({ concurrency: 5 }), e.worker({ concurrency: 5 })]);
    await trigger(job, { ms: 300 }, 8);
    await finished(job, 8);
    expect(maxOverlap(await runsOf(env.pool, job.id))).toBe(2);
    const [state] = await env.queue.flowInspect([job.id]);
    expect(state).toMatchObject({ running: 0, waiting: { maxConcurrency: 0, maxConcurrencyPerKey: 0, rateLimit: 0 } });
  });

  it('holds a per-key limit per key value while different keys run in parallel; a payload without the key shares one value', async () => {
    const job = await createJob(
      e.deps,
      jobSpec({ handler: 'sleep', limits: limits({ concurrencyKey: '/tenant', maxConcurrencyPerKey: 1 }) }),
    );
    await e.worker({ concurrency: 10 });
    await Promise.all([
      trigger(job, { ms: 300, tenant: 'a' }, 3),
      trigger(job, { ms: 300, tenant: 'b' }, 3),
      trigger(job, { ms: 300 }, 2),
    ]);
    await finished(job, 8);
    const runs = await runsOf(env.pool, job.id);
    for (const key of ['a', 'b', null]) expect(maxOverlap(runs.filter((r) => r.key === key))).toBe(1);
    expect(maxOverlap(runs)).toBe(3);
  });

  it('starts at most rate_limit attempts in any window of the period', async () => {
    const job = await createJob(
      e.deps,
      jobSpec({ handler: 'noop', limits: limits({ rateLimit: { limit: 3, periodMs: 1000, perKey: false } }) }),
    );
    await e.worker({ concurrency: 10 });
    const started = Date.now();
    await trigger(job, null, 8);
    await finished(job, 8);
    const runs = await runsOf(env.pool, job.id);
    // Start times are PostgreSQL's, a few ms off the Redis clock the limit is judged by.
    expect(maxStartsInWindow(runs, 1000 - 50)).toBeLessThanOrEqual(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000); // 3 + 3 + 2 starts need two more windows
  });

  it('starts an unlimited job at once behind 10,000 attempts waiting for a slot', async () => {
    const limited = await createJob(e.deps, jobSpec({ handler: 'sleep', limits: limits({ maxConcurrency: 1 }) }));
    const free = await createJob(e.deps, jobSpec({ handler: 'noop' }));
    const created = await env.store.executionsEnqueueMany({
      jobId: limited.id,
      payloads: Array.from({ length: 10_000 }, () => ({ ms: 60_000 })),
    });
    await env.queue.push(created);
    await e.worker({ concurrency: 20 });
    await eventually(
      async () => (await env.queue.flowInspect([limited.id]))[0]?.waiting.maxConcurrency === 9_999,
      20_000,
    );
    const t = Date.now();
    const { execution } = await triggerJob(e.deps, { jobId: free.id });
    await eventually(async () => (await env.store.executionGet(execution.id))?.status === 'succeeded', 5000, 5);
    expect(Date.now() - t).toBeLessThan(1000);
  });

  it('pauses a lane: triggers are accepted, nothing starts, running attempts finish; resume starts them', async () => {
    const job = await createJob(e.deps, jobSpec({ handler: 'sleep' }));
    await e.worker({ concurrency: 5 });
    const [running] = await trigger(job, { ms: 500 });
    await eventually(async () => (await env.store.executionGet(running!.execution.id))?.status === 'running');
    await setLanePaused(e.deps, 'short', true);
    const waiting = await trigger(job, { ms: 1 }, 3);
    await finished(job, 1);
    await new Promise((r) => setTimeout(r, 500));
    for (const w of waiting) expect((await env.store.executionGet(w.execution.id))?.status).toBe('queued');
    await setLanePaused(e.deps, 'short', false);
    await finished(job, 4, 5000);
  });

  it('applies a raised limit to attempts already waiting', async () => {
    const job = await createJob(e.deps, jobSpec({ handler: 'sleep', limits: limits({ maxConcurrency: 1 }) }));
    await e.worker({ concurrency: 10 });
    await trigger(job, { ms: 800 }, 4);
    await eventually(async () => (await env.queue.flowInspect([job.id]))[0]?.waiting.maxConcurrency === 3);
    const { rows } = await env.pool.query(
      `UPDATE jobs SET max_concurrency = 4, updated_at = now() WHERE id = $1 RETURNING id`,
      [job.id],
    );
    expect(rows).toHaveLength(1);
    await syncLimits(e.deps, [(await env.store.jobGet(job.id))!]);
    await eventually(async () => {
      const { rows: r } = await env.pool.query(
        `SELECT count(*)::int AS n FROM executions WHERE job_id = $1 AND status = 'running'`,
        [job.id],
      );
      return r[0].n === 4;
    }, 3000);
  });

  it('holds attempts queued before the job got limits to the limits it got (an edit), and frees them when removed', async () => {
    const job = await createJob(e.deps, jobSpec({ handler: 'sleep' }));
    await trigger(job, { ms: 200 }, 6);
    const limitedSql = `UPDATE jobs SET max_concurrency = $2, updated_at = now() WHERE id = $1`;
    await env.pool.query(limitedSql, [job.id, 1]);
    const capped = (await env.store.jobGet(job.id))!;
    await limitsChanged(e.deps, job, capped);
    await e.worker({ concurrency: 10 });
    await finished(job, 3);
    // Limits removed while three still wait: they start together.
    await env.pool.query(limitedSql, [job.id, null]);
    await limitsChanged(e.deps, capped, (await env.store.jobGet(job.id))!);
    await finished(job, 6);
    const runs = await runsOf(env.pool, job.id);
    expect(maxOverlap(runs.slice(0, 3))).toBe(1);
    expect(maxOverlap(runs.slice(3))).toBeGreaterThan(1);
    expect(await limitedLeft(env)).toBe(0);
  });

  it('runs a suspect of a limited job alone, within its limits, and the healthy attempts around it side by side', async () => {
    const active = new Set<string>();
    const starts: { id: string; alongside: string[] }[] = [];
    const track = async (ctx: { executionId: string }) => {
      starts.push({ id: ctx.executionId, alongside: [...active] });
      active.add(ctx.executionId);
      await new Promise((r) => setTimeout(r, 100 * (1 + (starts.length % 3))));
      active.delete(ctx.executionId);
    };
    const job = await createJob(e.deps, jobSpec({ handler: 'track', limits: limits({ maxConcurrency: 3 }) }));
    const other = await createJob(e.deps, jobSpec({ handler: 'track' }));
    // Its first delivery is lost with a worker that died before recording its start.
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    await restoreFlow(e.deps);
    const { claims } = await e.deps.queue.claim({ lane: 'short', count: 1, leaseMs: 60_000 });
    expect(claims.map((c) => c.id)).toEqual([execution.id]);
    await expireLease(env, 'short', execution.id);
    expect((await reapOnce(e.deps, { lanes: LANES })).requeued).toBe(1);
    await trigger(job, null, 5);
    await Promise.all(Array.from({ length: 4 }, () => triggerJob(e.deps, { jobId: other.id })));
    await e.worker({ concurrency: 4, handlers: { track } });
    await finished(job, 6);
    await finished(other, 4);
    expect(starts.find((s) => s.id === execution.id)?.alongside).toEqual([]);
    expect(starts.filter((s) => s.alongside.includes(execution.id))).toEqual([]);
    expect(maxOverlap(await runsOf(env.pool, job.id))).toBeLessThanOrEqual(3);
  });

  it('frees the slots of a worker that died (lease expiry) and of cancelled waiting attempts', async () => {
    const job = await createJob(e.deps, jobSpec({ handler: 'sleep', limits: limits({ maxConcurrency: 1 }) }));
    const [first, second] = await trigger(job, { ms: 100 }, 2);
    // A worker claims the first and dies before doing anything with it.
    const lost = await env.queue.claim({ lane: 'short', count: 5, leaseMs: 200 });
    expect(lost.claims.map((c) => c.id)).toEqual([first!.execution.id]);
    expect((await env.queue.claim({ lane: 'short', count: 5, leaseMs: 200 })).claims).toEqual([]);
    expect((await env.queue.flowInspect([job.id]))[0]).toMatchObject({ running: 1, waiting: { maxConcurrency: 1 } });
    await new Promise((r) => setTimeout(r, 250));
    await e.reap(); // the lease expired: its slot frees, the claim goes back to the queue
    const third = await trigger(job, { ms: 100 });
    await cancel(second!.execution.id);
    await e.worker({ concurrency: 5 });
    await finished(job, 2);
    expect((await env.store.executionGet(second!.execution.id))?.status).toBe('cancelled');
    expect((await env.store.executionGet(third[0]!.execution.id))?.status).toBe('succeeded');
    expect((await env.queue.flowInspect([job.id]))[0]).toMatchObject({ running: 0, waiting: { maxConcurrency: 0 } });
  });

  it.runIf(adapter.loseState)(
    'rebuilds slots from PostgreSQL when the queue loses its state with limited attempts running',
    async () => {
      const job = await createJob(e.deps, jobSpec({ handler: 'sleep', limits: limits({ maxConcurrency: 2 }) }));
      await e.worker({ concurrency: 10, leaseMs: 3000 });
      await trigger(job, { ms: 1500 }, 6);
      await eventually(async () => {
        const { rows } = await env.pool.query(
          `SELECT count(*)::int AS n FROM executions WHERE job_id = $1 AND status = 'running'`,
          [job.id],
        );
        return rows[0].n === 2;
      });
      await adapter.loseState!(env);
      // The worker finds the state lost at its next claim and restores it itself; the reconciler pushes the rest.
      await restoreFlow(e.deps);
      await e.reconcile();
      await finished(job, 6, 20_000);
      expect(maxOverlap(await runsOf(env.pool, job.id))).toBe(2);
    },
  );

  it.runIf(adapter.loseState)(
    'starts nothing until its flow state is restored, which a worker does by itself; a paused lane stays paused',
    async () => {
      const job = await createJob(e.deps, jobSpec({ handler: 'noop' }));
      await setLanePaused(e.deps, 'long', true);
      await adapter.loseState!(env);
      const { execution } = await triggerJob(e.deps, { jobId: job.id });
      expect(await env.queue.claim({ lane: 'long', count: 1, leaseMs: 1000 })).toMatchObject({
        claims: [],
        state: 'restore',
      });
      await e.worker({ concurrency: 2 });
      await eventually(async () => (await env.store.executionGet(execution.id))?.status === 'succeeded', 5000);
      expect(e.logs.some((l) => (l.obj as { event?: string }).event === 'flow.restored')).toBe(true);
      expect(await env.queue.claim({ lane: 'long', count: 1, leaseMs: 1000 })).toMatchObject({
        claims: [],
        state: 'paused',
      });
    },
  );

  async function cancel(id: string) {
    const { cancelExecution } = await import('@jobs/core');
    await cancelExecution(e.deps, id);
  }
});
