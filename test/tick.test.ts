/** The scheduler tick on the real services: cron jobs fire, and racing ticks never duplicate a fire time. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJob, runTick } from '@jobs/core';
import { createTestEnv, eventually, manualClock, recorder, type TestEnv } from './support/env';
import { engine } from './support/engine';
import { jobSpec } from './support/fixtures';

let env: TestEnv;
let e: ReturnType<typeof engine>;

beforeEach(async () => {
  env = await createTestEnv('tick');
  e = engine(env);
});
afterEach(async () => {
  await e.stopAll();
  await env.cleanup();
});

describe('scheduler tick', () => {
  it('fires a cron job on time and the worker runs it', async () => {
    const job = await createJob(e.deps, jobSpec({ cronExpr: '* * * * * *', handler: 'noop' }));
    expect(job.nextRunAt!.getTime() % 1000).toBe(0);
    await e.worker();
    const tick = await e.tick(3000);
    expect(tick.created).toBeGreaterThanOrEqual(3);
    const succeeded = await eventually(async () => {
      const list = await env.store.executionList({ jobId: job.id, status: 'succeeded', limit: 100 });
      return list.length >= 2 ? list : null;
    }, 6000);
    for (const x of succeeded) {
      expect(x.trigger).toBe('cron');
      // Materialised ahead into the delayed set and promoted by the worker: starts within a second of its fire time.
      const lateness = x.startedAt!.getTime() - x.scheduledFor.getTime();
      expect(lateness).toBeGreaterThanOrEqual(0);
      expect(lateness).toBeLessThan(1000);
    }
    const after = await env.store.jobGet(job.id);
    expect(after!.nextRunAt!.getTime()).toBeGreaterThan(Date.now());
    expect(after!.lastRunAt).not.toBeNull();
  });

  it('materialises each fire time exactly once when ten ticks race', async () => {
    const clock = manualClock('2025-06-01T12:00:30Z');
    const deps = { ...e.deps, clock };
    const jobs = [];
    for (let i = 0; i < 40; i++) jobs.push(await createJob(deps, jobSpec({ cronExpr: '*/1 * * * *' })));
    // 12:01 and 12:02 were missed (older than the 60 s grace); 12:03 is due now and covers them (run_once).
    clock.set('2025-06-01T12:03:10Z');
    const rec = recorder();
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        runTick({ ...deps, sink: rec.sink, logger: rec.logger }, { lookaheadMs: 60_000, batchSize: 7 }),
      ),
    );
    const created = results.reduce((n, r) => n + r.created, 0);
    const { rows } = await env.pool.query(
      `SELECT job_id, scheduled_for, count(*)::int AS n FROM executions GROUP BY job_id, scheduled_for`,
    );
    expect(rows.every((r) => r.n === 1)).toBe(true);
    expect(rows.length).toBe(created);
    // Per job: 12:03 (due now) and 12:04 (within the 60 s lookahead); no separate catch-up run.
    const perJob = new Map<string, string[]>();
    for (const r of rows) perJob.set(r.job_id, [...(perJob.get(r.job_id) ?? []), r.scheduled_for.toISOString()].sort());
    expect(perJob.size).toBe(40);
    for (const times of perJob.values()) {
      expect(times).toEqual(['2025-06-01T12:03:00.000Z', '2025-06-01T12:04:00.000Z']);
    }
    const job = await env.store.jobGet(jobs[0]!.id);
    expect(job!.nextRunAt!.toISOString()).toBe('2025-06-01T12:05:00.000Z');
    expect((await env.queue.depth()).short.ready).toBe(created);
  });

  it('does nothing when run again, or by a tick whose clock is five minutes behind', async () => {
    const clock = manualClock('2025-06-01T12:00:30Z');
    await createJob({ ...e.deps, clock }, jobSpec({ cronExpr: '*/1 * * * *' }));
    clock.set('2025-06-01T12:01:00Z');
    const first = await runTick({ ...e.deps, clock }, { lookaheadMs: 30_000 });
    expect(first.created).toBe(1);
    expect((await runTick({ ...e.deps, clock }, { lookaheadMs: 30_000 })).created).toBe(0);
    const behind = manualClock('2025-06-01T11:56:00Z');
    expect((await runTick({ ...e.deps, clock: behind }, { lookaheadMs: 30_000 })).jobs).toBe(0);
  });

  it('leaves paused and deleted jobs alone', async () => {
    const clock = manualClock('2025-06-01T12:00:30Z');
    const paused = await createJob({ ...e.deps, clock }, jobSpec({ cronExpr: '* * * * *', status: 'paused' }));
    expect(paused.nextRunAt).toBeNull();
    clock.set('2025-06-01T13:00:00Z');
    expect((await runTick({ ...e.deps, clock }, { lookaheadMs: 30_000 })).jobs).toBe(0);
  });
});
