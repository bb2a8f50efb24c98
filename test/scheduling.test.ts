/** Scheduling semantics on the real services: DST nights, misfire and overlap policies, resume, one-off runs. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJob, pauseJob, resumeJob, runTick, type Job } from '@jobs/core';
import { createTestEnv, eventually, manualClock, type TestEnv } from './support/env';
import { engine } from './support/engine';
import { jobSpec } from './support/fixtures';

let env: TestEnv;
let e: ReturnType<typeof engine>;

beforeEach(async () => {
  env = await createTestEnv('sched');
  e = engine(env);
});
afterEach(async () => {
  await e.stopAll(0);
  await env.cleanup();
});

async function fireTimes(job: Job): Promise<string[]> {
  const { rows } = await env.pool.query(
    `SELECT scheduled_for FROM executions WHERE job_id = $1 ORDER BY scheduled_for`,
    [job.id],
  );
  return rows.map((r) => r.scheduled_for.toISOString());
}

/** Steps a fake clock minute by minute from `from` to `to`, running one tick per step, as a 1-minute scheduler would. */
async function stepTicks(clock: ReturnType<typeof manualClock>, from: string, to: string, lookaheadMs = 90_000) {
  for (clock.set(from); clock.now() <= new Date(to); clock.advance(60_000)) {
    await runTick({ ...e.deps, clock }, { lookaheadMs });
  }
}

describe('daylight saving time, stepping the scheduler minute by minute', () => {
  it('runs `30 1 * * *` exactly once on the 2025-11-02 fall-back night in America/New_York (first 01:30)', async () => {
    const clock = manualClock('2025-11-01T12:00:00Z');
    const job = await createJob(
      { ...e.deps, clock },
      jobSpec({ cronExpr: '30 1 * * *', timezone: 'America/New_York' }),
    );
    await stepTicks(clock, '2025-11-02T03:00:00Z', '2025-11-02T09:00:00Z');
    expect(await fireTimes(job)).toEqual(['2025-11-02T05:30:00.000Z']);
  });

  it('runs `30 2 * * *` once on the 2025-03-09 spring-forward night, shifted to 03:30 EDT', async () => {
    const clock = manualClock('2025-03-08T12:00:00Z');
    const job = await createJob(
      { ...e.deps, clock },
      jobSpec({ cronExpr: '30 2 * * *', timezone: 'America/New_York' }),
    );
    await stepTicks(clock, '2025-03-09T05:00:00Z', '2025-03-09T09:00:00Z');
    expect(await fireTimes(job)).toEqual(['2025-03-09T07:30:00.000Z']);
  });

  it('follows elapsed time for a wildcard hour: `0 * * * *` fires at both 01:00s of the fall-back night', async () => {
    const clock = manualClock('2025-11-02T03:30:00Z');
    const job = await createJob({ ...e.deps, clock }, jobSpec({ cronExpr: '0 * * * *', timezone: 'America/New_York' }));
    await stepTicks(clock, '2025-11-02T03:31:00Z', '2025-11-02T07:30:00Z');
    // 00:00 EDT, 01:00 EDT, 01:00 EST, 02:00 EST: one per real hour, none twice
    expect(await fireTimes(job)).toEqual([
      '2025-11-02T04:00:00.000Z',
      '2025-11-02T05:00:00.000Z',
      '2025-11-02T06:00:00.000Z',
      '2025-11-02T07:00:00.000Z',
    ]);
  });
});

describe('misfire policies after ten minutes of downtime', () => {
  const policies = [
    { misfire: 'skip' as const, expected: ['12:11'] },
    { misfire: 'run_once' as const, expected: ['12:10', '12:11'] },
    { misfire: 'catch_up' as const, catchUpMax: 3, expected: ['12:08', '12:09', '12:10', '12:11'] },
    {
      misfire: 'catch_up' as const,
      catchUpMax: 100,
      misfireDeadlineMs: 150_000,
      expected: ['12:08', '12:09', '12:10', '12:11'],
    },
  ];
  it.each(policies)('$misfire (cap $catchUpMax, deadline $misfireDeadlineMs)', async ({ expected, ...policy }) => {
    const clock = manualClock('2025-06-01T12:00:30Z');
    const job = await createJob({ ...e.deps, clock }, jobSpec({ cronExpr: '*/1 * * * *', ...policy }));
    clock.set('2025-06-01T12:10:30Z');
    await runTick({ ...e.deps, clock }, { lookaheadMs: 60_000, misfireGraceMs: 20_000 });
    expect(await fireTimes(job)).toEqual(expected.map((hm) => `2025-06-01T${hm}:00.000Z`));
  });
});

describe('pause and resume', () => {
  it('resumes from now: no burst of the runs missed while paused', async () => {
    const clock = manualClock('2025-06-01T12:00:30Z');
    const deps = { ...e.deps, clock };
    const job = await createJob(deps, jobSpec({ cronExpr: '*/1 * * * *', misfire: 'catch_up', catchUpMax: 100 }));
    await runTick(deps, { lookaheadMs: 60_000 }); // materialises 12:01 ahead
    clock.set('2025-06-01T12:00:40Z');
    await pauseJob(deps, job.id);
    // The fire time materialised ahead is withdrawn with the pause.
    const { rows } = await env.pool.query(`SELECT status, error FROM executions WHERE job_id = $1`, [job.id]);
    expect(rows).toEqual([{ status: 'cancelled', error: 'job paused' }]);
    clock.set('2025-06-01T12:30:10Z');
    expect((await runTick(deps, { lookaheadMs: 60_000 })).jobs).toBe(0);
    const resumed = await resumeJob(deps, job.id);
    expect(resumed.nextRunAt!.toISOString()).toBe('2025-06-01T12:31:00.000Z');
    await runTick(deps, { lookaheadMs: 60_000 });
    expect(await fireTimes(job)).toEqual(['2025-06-01T12:01:00.000Z', '2025-06-01T12:31:00.000Z']);
  });
});

describe('one-off jobs', () => {
  it('runs once at run_at, then has no next run', async () => {
    const runAt = new Date(Date.now() + 1500);
    const job = await createJob(e.deps, jobSpec({ runAt }));
    expect(job.nextRunAt!.toISOString()).toBe(runAt.toISOString());
    await e.worker();
    await e.tick(5000);
    const done = await eventually(async () => {
      const list = await env.store.executionList({ jobId: job.id, limit: 10 });
      return list[0]?.status === 'succeeded' ? list : null;
    });
    expect(done).toHaveLength(1);
    expect(done[0]!.trigger).toBe('once');
    expect(done[0]!.startedAt!.getTime()).toBeGreaterThanOrEqual(runAt.getTime());
    expect(done[0]!.startedAt!.getTime() - runAt.getTime()).toBeLessThan(1000);
    expect((await env.store.jobGet(job.id))!.nextRunAt).toBeNull();
    expect((await e.tick(5000)).created).toBe(0);
  });
});

describe('overlap policies with a job that outlasts its one-second schedule', () => {
  async function runFor(overlap: 'forbid' | 'replace' | 'allow') {
    const job = await createJob(
      e.deps,
      jobSpec({ cronExpr: '* * * * * *', handler: 'sleep', payload: { ms: 2500 }, overlap }),
    );
    await e.worker({ concurrency: 10 });
    await e.tick(4000);
    await new Promise((r) => setTimeout(r, 4500));
    await pauseJob(e.deps, job.id);
    await e.stopAll(5000);
    const { rows } = await env.pool.query(
      `SELECT id, status, error, started_at, finished_at FROM executions WHERE job_id = $1 ORDER BY scheduled_for`,
      [job.id],
    );
    return rows;
  }
  const overlapping = (rows: { started_at: Date | null; finished_at: Date | null }[]) => {
    const ran = rows
      .filter((r) => r.started_at)
      .map((r) => [r.started_at!.getTime(), (r.finished_at ?? new Date()).getTime()] as const);
    return ran.some(([s1, f1], i) => ran.some(([s2, f2], j) => i !== j && s1 < f2 - 50 && s2 < f1 - 50));
  };

  it('forbid: a fire time whose previous run is still running is recorded as skipped', async () => {
    const rows = await runFor('forbid');
    expect(rows.filter((r) => r.status === 'skipped').length).toBeGreaterThanOrEqual(2);
    expect(rows.find((r) => r.status === 'skipped')!.error).toMatch(/still running \(overlap: forbid\)/);
    expect(rows.filter((r) => r.status === 'succeeded').length).toBeGreaterThanOrEqual(1);
    expect(overlapping(rows)).toBe(false);
  });

  it('replace: the running one is cancelled and the new one starts', async () => {
    const rows = await runFor('replace');
    const replaced = rows.filter((r) => r.status === 'cancelled' && /replaced by execution/.test(r.error ?? ''));
    expect(replaced.length).toBeGreaterThanOrEqual(2);
    expect(overlapping(rows)).toBe(false);
  });

  it('allow: runs overlap', async () => {
    const rows = await runFor('allow');
    expect(overlapping(rows)).toBe(true);
  });
});
