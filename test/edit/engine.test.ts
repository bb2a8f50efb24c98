/**
 * Edits against running workers and ticks (real PostgreSQL and Redis): no stale definition, running attempts keep
 * their version, schedule changes racing ticks, and waiting attempts moved to a new lane or priority.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '@jobs/core';
import { apiHarness, type Harness } from '../api/harness';
import { eventually, manualClock } from '../support/env';
import { engine } from '../support/engine';

let h: Harness;
let e: ReturnType<typeof engine>;

async function setup(clock: Clock = systemClock) {
  h = await apiHarness({ clock });
  e = engine(h.env, { clock });
  return { h, e };
}

afterEach(async () => {
  await e?.stopAll();
  await h?.cleanup();
});

const patch = (id: string, body: unknown) => h.call('PATCH', `/api/v1/jobs/${id}`, { body });
const trigger = async (id: string) => {
  const res = await h.call('POST', `/api/v1/jobs/${id}/trigger`, { body: {} });
  expect(res.status).toBe(201);
  return res.body.id as string;
};
const finished = (id: string) =>
  eventually(async () => {
    const x = await h.env.store.executionGet(id);
    return x && ['succeeded', 'dead', 'failed'].includes(x.status) ? x : null;
  });

describe('a change takes effect for the next attempt that starts, on every worker', () => {
  it('a PATCH of command followed at once by a trigger runs the new command on a worker that ran the old one', async () => {
    await setup();
    const job = await h.createJob({ command: 'echo old-definition' });
    await e.worker();
    await e.worker();
    for (let round = 1; round <= 3; round++) {
      // Warm both workers' caches with the current definition.
      const before = await Promise.all([trigger(job.id), trigger(job.id), trigger(job.id)]);
      for (const id of before)
        expect((await finished(id)).output).toContain(round === 1 ? 'old-definition' : `definition-${round - 1}`);
      const res = await patch(job.id, { command: `echo definition-${round}` });
      expect(res.body.version).toBe(round + 1);
      const after = await Promise.all([trigger(job.id), trigger(job.id), trigger(job.id)]);
      for (const id of after) {
        const done = await finished(id);
        expect(done.output).toContain(`definition-${round}`);
        expect(done.jobVersion).toBe(round + 1);
      }
    }
  });

  it('an attempt already running finishes on the version it started with', async () => {
    await setup();
    const job = await h.createJob({ command: 'sleep 1; echo first-version' });
    await e.worker();
    const running = await trigger(job.id);
    await eventually(async () => (await h.env.store.executionGet(running))?.status === 'running');
    expect((await patch(job.id, { command: 'echo second-version', timeout_seconds: 60 })).body.version).toBe(2);
    const done = await finished(running);
    expect(done.status).toBe('succeeded');
    expect(done.output).toContain('first-version');
    expect(done.jobVersion).toBe(1);
    const next = await finished(await trigger(job.id));
    expect(next.output).toContain('second-version');
    expect(next.jobVersion).toBe(2);
    const listed = await h.call('GET', `/api/v1/jobs/${job.id}/executions`);
    expect(listed.body.data.map((x: any) => x.job_version)).toEqual([2, 1]);
  });
});

describe('a schedule change', () => {
  const times = async (jobId: string) => {
    const { rows } = await h.env.pool.query(
      `SELECT scheduled_for FROM executions WHERE job_id = $1 AND trigger = 'cron' AND status <> 'cancelled' ORDER BY scheduled_for`,
      [jobId],
    );
    return rows.map((r) => (r.scheduled_for as Date).toISOString().slice(11, 19));
  };

  it('recomputes next_run_at from now and withdraws the future fire times of the old schedule from Redis and PostgreSQL', async () => {
    const clock = manualClock('2025-01-01T00:00:00Z');
    await setup(clock);
    const job = await h.createJob({ cron_expr: '*/2 * * * * *' });
    await e.tick(10_000);
    expect(await times(job.id)).toEqual(['00:00:02', '00:00:04', '00:00:06', '00:00:08', '00:00:10']);
    clock.set('2025-01-01T00:00:05Z');
    const res = await patch(job.id, { cron_expr: '*/3 * * * * *' });
    expect(res.body.next_run_at).toBe('2025-01-01T00:00:06.000Z');
    // Those due before the change stay (they were due under the old schedule); later ones are withdrawn, but for
    // 06, a fire time of the new schedule too.
    expect(await times(job.id)).toEqual(['00:00:02', '00:00:04', '00:00:06']);
    const delayed = await h.env.redis.zrange(h.env.redisQueue!.keys.lane('short').delayed, '0', '-1');
    const { rows } = await h.env.pool.query(
      `SELECT id, status, error FROM executions WHERE job_id = $1 AND scheduled_for > $2 ORDER BY scheduled_for`,
      [job.id, '2025-01-01T00:00:05Z'],
    );
    expect(rows.map((r) => r.status)).toEqual(['queued', 'cancelled', 'cancelled']);
    for (const r of rows.slice(1)) expect(delayed.some((m) => m.endsWith(`:${r.id}`))).toBe(false);
    await e.tick(10_000);
    expect(await times(job.id)).toEqual(['00:00:02', '00:00:04', '00:00:06', '00:00:09', '00:00:12', '00:00:15']);
  });

  it('neither loses nor doubles a fire time while ticks race the change', async () => {
    const clock = manualClock('2025-01-01T00:00:00Z');
    await setup(clock);
    for (let round = 0; round < 6; round++) {
      clock.set('2025-01-01T00:00:00Z');
      const job = await h.createJob({ cron_expr: '*/2 * * * * *' });
      await e.tick(10_000);
      clock.set('2025-01-01T00:00:05Z');
      // Several ticks (each its own transaction) race the PATCH; each tick, before or after it, holds the row lock.
      const ticks = Array.from({ length: 4 }, (_, i) =>
        new Promise((r) => setTimeout(r, i * round)).then(() => e.tick(10_000)),
      );
      const [res] = await Promise.all([patch(job.id, { cron_expr: '*/3 * * * * *' }), ...ticks]);
      expect(res.status).toBe(200);
      await e.tick(10_000);
      expect(await times(job.id), `round ${round}`).toEqual([
        '00:00:02',
        '00:00:04',
        '00:00:06',
        '00:00:09',
        '00:00:12',
        '00:00:15',
      ]);
      const job2 = await h.env.store.jobGet(job.id);
      expect(job2!.nextRunAt!.toISOString()).toBe('2025-01-01T00:00:18.000Z');
    }
  });
});

describe('an edit that does not move the fire times', () => {
  const fires = async (jobId: string) => {
    const { rows } = await h.env.pool.query(
      `SELECT scheduled_for, status FROM executions WHERE job_id = $1 AND trigger = 'cron' ORDER BY scheduled_for, id`,
      [jobId],
    );
    return rows.map((r) => `${(r.scheduled_for as Date).toISOString().slice(17, 19)} ${r.status}`);
  };

  it('41 quick time zone edits of an every-second job keep its queued fire times: none dropped, none doubled', async () => {
    const clock = manualClock('2025-01-01T00:00:00Z');
    await setup(clock);
    const job = await h.createJob({ cron_expr: '* * * * * *' });
    await e.tick(5000);
    // Edits come every 300 ms, faster than the fire times; a tick runs after every third one.
    for (let i = 0; i < 41; i++) {
      clock.advance(300);
      const res = await patch(job.id, { timezone: i % 2 ? 'UTC' : 'Europe/Paris' });
      expect(res.status).toBe(200);
      if (i % 3 === 2) await e.tick(5000);
    }
    await e.tick(5000);
    // 12.3 s in, ticks looking 5 s ahead: every second from 1 to 17 queued once, none cancelled.
    const expected = Array.from({ length: 17 }, (_, i) => `${String(i + 1).padStart(2, '0')} queued`);
    expect(await fires(job.id)).toEqual(expected);
  });

  it('a real schedule change still withdraws what the new schedule does not fire, and keeps what it does', async () => {
    const clock = manualClock('2025-01-01T00:00:00Z');
    await setup(clock);
    const job = await h.createJob({ cron_expr: '*/2 * * * * *' });
    await e.tick(10_000);
    clock.set('2025-01-01T00:00:01Z');
    expect((await patch(job.id, { cron_expr: '*/4 * * * * *' })).status).toBe(200);
    expect(await fires(job.id)).toEqual(['02 cancelled', '04 queued', '06 cancelled', '08 queued', '10 cancelled']);
    await e.tick(10_000);
    expect((await fires(job.id)).filter((f) => f.endsWith('queued'))).toEqual(['04 queued', '08 queued']);
  });

  it('a quick second edit keeps a fire time that came due before the tick queued it again', async () => {
    const clock = manualClock('2025-01-01T00:00:00Z');
    await setup(clock);
    const job = await h.createJob({ cron_expr: '*/2 * * * * *' });
    await e.tick(1000);
    clock.set('2025-01-01T00:00:01.500Z');
    // The first edit withdraws the 02 of the old schedule (the new one fires at 03); no tick runs before 03...
    expect((await patch(job.id, { cron_expr: '*/3 * * * * *' })).body.next_run_at).toBe('2025-01-01T00:00:03.000Z');
    clock.set('2025-01-01T00:00:03.200Z');
    // ...so the second edit, after 03 came due, must not plan past it.
    expect((await patch(job.id, { cron_expr: '*/3 * * * * *', timezone: 'Asia/Tokyo' })).status).toBe(200);
    await e.tick(3000);
    expect((await fires(job.id)).filter((f) => f.endsWith('queued'))).toEqual(['03 queued', '06 queued']);
  });
});

describe('lane, priority and limits apply to attempts not yet started', () => {
  it('moves waiting attempts to the new lane and priority, in PostgreSQL and Redis', async () => {
    await setup();
    const job = await h.createJob({ command: 'echo moved', lane: 'short' });
    const ids = [await trigger(job.id), await trigger(job.id), await trigger(job.id)];
    const short = h.env.redisQueue!.keys.lane('short');
    const long = h.env.redisQueue!.keys.lane('long');
    expect(await h.env.redis.zcard(short.ready)).toBe(3);
    const res = await patch(job.id, { lane: 'long', priority: 7 });
    expect(res.body).toMatchObject({ lane: 'long', priority: 7 });
    const { rows } = await h.env.pool.query(`SELECT lane, priority FROM executions WHERE id = ANY($1::bigint[])`, [
      ids,
    ]);
    expect(rows).toEqual(Array(3).fill({ lane: 'long', priority: 7 }));
    expect(await h.env.redis.zcard(short.ready)).toBe(0);
    expect((await h.env.redis.zrange(long.ready, '0', '-1')).sort()).toEqual([...ids].sort());
    await e.worker({ lanes: ['long'] });
    for (const id of ids) expect((await finished(id)).status).toBe('succeeded');
  });

  it('gives waiting attempts the flow key of a new concurrency key', async () => {
    await setup();
    const job = await h.createJob({ command: 'echo keyed', payload: { tenant: 'acme' } });
    const ids = [await trigger(job.id), await trigger(job.id)];
    const res = await patch(job.id, { concurrency_key: '/tenant', max_concurrency_per_key: 1 });
    expect(res.status).toBe(200);
    const { rows } = await h.env.pool.query(`SELECT flow_key FROM executions WHERE id = ANY($1::bigint[])`, [ids]);
    expect(rows.map((r) => r.flow_key)).toEqual(['"acme"', '"acme"']);
    await e.worker();
    for (const id of ids) expect((await finished(id)).status).toBe('succeeded');
  });
});

describe('retries after an edit', () => {
  it('a retry created after a lane and priority change takes the new ones', async () => {
    await setup();
    const job = await h.createJob({
      command: 'sleep 0.5; exit 3',
      max_retries: 1,
      backoff: { base_seconds: 0, factor: 1, max_seconds: 0, jitter: 'none' },
    });
    await e.worker();
    const first = await trigger(job.id);
    await eventually(async () => (await h.env.store.executionGet(first))?.status === 'running');
    expect((await patch(job.id, { lane: 'long', priority: 9, command: 'true' })).status).toBe(200);
    const retry = await eventually(async () =>
      (await h.env.store.executionList({ jobId: job.id, limit: 5 })).find((x) => x.trigger === 'retry'),
    );
    expect(retry).toMatchObject({ lane: 'long', priority: 9 });
    expect((await finished(retry.id)).status).toBe('succeeded');
  });
});
