/**
 * The stats reader holds the roll-up's settled minutes (stats.ts): a held minute is not read again, so a change to
 * it (which no writer makes: they add to the current minute) does not appear, while the minutes inside the margin
 * are read every time, a minute is held with what it had when it settled, and a minute leaves the counts when it
 * leaves the 24-hour window. With writes as the writers make them, the counts equal a read of the whole window.
 * The database clock is a test clock: a `now()` in the test's schema, put before pg_catalog on the search_path.
 */
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createStore } from '@jobs/store';
import { createTestEnv, schemaUrl, type TestEnv } from './support/env';

let env: TestEnv;
let pool: pg.Pool;

beforeAll(async () => {
  env = await createTestEnv('stats');
  await env.pool.query(`CREATE TABLE test_clock (at timestamptz NOT NULL)`);
  await env.pool.query(`INSERT INTO test_clock VALUES ('2026-01-01T12:00:30Z')`);
  await env.pool.query(
    `CREATE FUNCTION now() RETURNS timestamptz LANGUAGE sql STABLE AS $$ SELECT at FROM test_clock $$`,
  );
  const url = new URL(schemaUrl(env.schema));
  url.searchParams.set('options', `-c search_path=${env.schema},pg_catalog`);
  pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
});
afterAll(async () => {
  await pool.end();
  await env.cleanup();
});
beforeEach(async () => {
  await pool.query(`DELETE FROM execution_minutes`);
  await setClock('2026-01-01T12:00:30Z');
});

async function setClock(at: string | number): Promise<void> {
  await pool.query(`UPDATE test_clock SET at = $1`, [typeof at === 'number' ? new Date(at) : at]);
}

const clock = async () => ((await pool.query(`SELECT now() AS at`)).rows[0].at as Date).getTime();

/** Sets the roll-up row of the minute `ago` minutes before the current one (by the test clock). */
async function minute(ago: number, status: string, count: number, lane = 'short'): Promise<void> {
  await pool.query(
    `INSERT INTO execution_minutes (minute, status, lane, count, duration_ms)
     VALUES (date_trunc('minute', now()) - make_interval(mins => $1), $2, $3, $4, 0)
     ON CONFLICT (minute, status, lane) DO UPDATE SET count = excluded.count`,
    [ago, status, lane, count],
  );
}

/** A process's stats read: each call of createStore is a new process's. */
const reader = (options: { historyRetentionMs?: number | null } = {}) => createStore(pool, options).executionStats;

describe('stats reader', () => {
  it('uses the test clock', async () => {
    expect(new Date(await clock()).toISOString()).toBe('2026-01-01T12:00:30.000Z');
  });

  it('holds settled minutes: a change to one does not appear; the margin is read every time; a minute settles with its last count', async () => {
    const start = await clock();
    await minute(10, 'succeeded', 5);
    await minute(10, 'failed', 1, 'long');
    await minute(0, 'succeeded', 3);
    const stats = reader();
    expect((await stats()).counts).toMatchObject({ succeeded: 8, failed: 1 });

    // No writer changes a settled minute; were one to, this process keeps what it read (a new process sees it).
    await minute(10, 'succeeded', 50);
    // The current minute changes; the previous one, empty when last read, gets its first row.
    await minute(0, 'succeeded', 4);
    await minute(1, 'dead', 2);
    let s = await stats();
    expect(s.counts).toMatchObject({ succeeded: 9, failed: 1, dead: 2 });
    expect(s.throughput).toEqual({ lastMinute: 6, lastHour: 12 });
    expect((await reader()()).counts).toMatchObject({ succeeded: 54, dead: 2 });

    // Three minutes on, 12:00 has settled: held with the count it had then (6), not read again.
    await minute(0, 'succeeded', 6);
    await setClock(start + 3 * 60_000);
    expect((await stats()).counts).toMatchObject({ succeeded: 11, dead: 2 });
    await minute(3, 'succeeded', 7);
    await minute(0, 'succeeded', 1);
    s = await stats();
    expect(s.counts).toMatchObject({ succeeded: 12, dead: 2 });
    expect(s.throughput.lastMinute).toBe(1);

    // A day less five minutes on: 11:50 has left the window, 12:00 and later are still in it.
    await setClock(start + 86_400_000 - 5 * 60_000);
    s = await stats();
    expect(s.counts).toMatchObject({ succeeded: 7, failed: 0, dead: 2 });
    expect(s.throughput).toEqual({ lastMinute: 0, lastHour: 0 });
    // And after a day without reads, a read of the whole window.
    await setClock(start + 3 * 86_400_000);
    await minute(0, 'cancelled', 1);
    expect((await stats()).counts).toMatchObject({ succeeded: 0, dead: 0, cancelled: 1 });
  });

  it('counts what a read of the whole window counts, as the clock runs and writers add to the current minute', async () => {
    const stats = reader();
    const whole = reader({ historyRetentionMs: 3_600_000 }); // retention under a day: holds nothing
    await minute(1500, 'succeeded', 100); // older than the window
    await minute(1430, 'succeeded', 7);
    await minute(300, 'cancelled', 2);
    let at = await clock();
    const statuses = ['succeeded', 'succeeded', 'succeeded', 'failed', 'dead', 'cancelled', 'skipped'];
    for (let step = 0; step < 40; step++) {
      // Steps of 25 to 95 seconds, and one of nearly a day; a write or two to the current minute at each.
      at += step === 20 ? 86_000_000 : 25_000 + ((step * 37) % 70) * 1000;
      await setClock(at);
      const status = statuses[step % statuses.length]!;
      const current = await pool.query(
        `SELECT coalesce(sum(count), 0)::int AS n FROM execution_minutes WHERE minute = date_trunc('minute', now()) AND status = $1 AND lane = 'short'`,
        [status],
      );
      await minute(0, status, current.rows[0].n + 1 + (step % 3));
      if (step % 4 === 0) await minute(0, 'succeeded', step + 1, 'long');
      const [held, read] = await Promise.all([stats(), whole()]);
      expect({ step, counts: held.counts, throughput: held.throughput, rate: held.successRate }).toEqual({
        step,
        counts: read.counts,
        throughput: read.throughput,
        rate: read.successRate,
      });
    }
    // Retention under 24 hours deletes minutes of the window: such a reader reads them every time.
    await pool.query(`DELETE FROM execution_minutes WHERE status = 'cancelled'`);
    expect((await whole()).counts.cancelled).toBe(0);
  });
});
