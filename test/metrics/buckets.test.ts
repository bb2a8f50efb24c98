/**
 * The recorder's statement fills the per-minute histograms exactly: a value equal to a bound counts in that bound's
 * bucket, one just above it does not, and lateness is counted only for cron and one-off runs.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { DURATION_BOUNDS_MS } from '../../packages/store/src/minutes';
import { createTestEnv, type TestEnv } from '../support/env';
import { noopJob } from '../bench/lib/ours';

let env: TestEnv;
beforeEach(async () => {
  env = await createTestEnv('buckets');
});
afterEach(async () => {
  await env.cleanup();
});

it('counts durations at, below and above every bound into cumulative buckets', async () => {
  const durations = [0, 4, 5, 6, 10, 11, 999, 1000, 1001, 3_600_000, 3_600_001, 7_200_000];
  const jobId = await noopJob(env);
  const created = await env.store.executionsEnqueueMany({ jobId, payloads: durations.map(() => null) });
  const outcome = (id: string, durationMs: number) => ({
    id,
    token: `t${id}`,
    jobId,
    attempt: 1,
    lane: 'short' as const,
    priority: 0,
    status: 'succeeded' as const,
    exitCode: null,
    output: '',
    error: null,
    durationMs,
    retryDelayMs: null,
    workerId: 'w',
    startedAgoMs: durationMs,
  });
  // Two statements, so the second adds to the row the first wrote.
  const half = Math.floor(durations.length / 2);
  for (const [from, to] of [
    [0, half],
    [half, durations.length],
  ] as const) {
    await env.store.executionsRecord({
      workerId: 'w',
      leaseMs: 30_000,
      starts: [],
      outcomes: created.slice(from, to).map((c, i) => outcome(c.id, durations[from + i]!)),
    });
  }
  const { rows } = await env.pool.query(
    `SELECT sum(count)::int AS count, sum(duration_ms)::bigint AS duration_ms, json_agg(duration_le) AS le, bool_and(lateness_le IS NULL) AS no_lateness
     FROM execution_minutes WHERE status = 'succeeded' AND lane = 'short'`,
  );
  expect(rows).toHaveLength(1);
  const expected = [...DURATION_BOUNDS_MS.map((b) => durations.filter((d) => d <= b).length), durations.length];
  // The minute may have turned between the statements: add up the rows.
  const le = (rows[0].le as number[][]).reduce(
    (sum, a) => sum.map((x, i) => x + Number(a[i])),
    expected.map(() => 0),
  );
  expect(rows[0].count).toBe(durations.length);
  expect(Number(rows[0].duration_ms)).toBe(durations.reduce((a, b) => a + b, 0));
  expect(le).toEqual(expected);
  // Manual runs have no schedule to be late for.
  expect(rows[0].no_lateness).toBe(true);
});
