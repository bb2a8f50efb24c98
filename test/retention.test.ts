import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJob, newRetentionCursor, pruneOnce, type RetentionRules } from '@jobs/core';
import { createTestEnv, recorder, type TestEnv } from './support/env';
import { engine } from './support/engine';
import { jobSpec } from './support/fixtures';

const DAY = 86_400_000;
const RULES: RetentionRules = { historyMs: 30 * DAY, deadMs: 90 * DAY };

let env: TestEnv;

beforeEach(async () => {
  env = await createTestEnv('retention');
});
afterEach(async () => {
  await env.cleanup();
});

/** A job row straight in SQL (retention_days as given). */
async function job(retentionDays: number | null = null): Promise<string> {
  const { rows } = await env.pool.query(
    `INSERT INTO jobs (name, handler, retention_days) VALUES ('j-' || gen_random_uuid(), 'noop', $1) RETURNING id`,
    [retentionDays],
  );
  return rows[0].id;
}

/** An execution queued `daysAgo` days ago and (unless live) finished then; rows must be made oldest first. */
async function row(
  jobId: string,
  status: string,
  daysAgo: number,
  extra: { trigger?: string; retryOf?: string } = {},
): Promise<string> {
  const live = ['queued', 'retrying', 'running'].includes(status);
  const { rows } = await env.pool.query(
    `INSERT INTO executions (job_id, trigger, status, lane, scheduled_for, queued_at, started_at, finished_at, retry_of)
     SELECT $1, $2, $3, 'short', t, t, CASE WHEN $4 THEN NULL ELSE t END, CASE WHEN $4 THEN NULL ELSE t END, $6
     FROM (SELECT now() - make_interval(secs => $5::double precision * 86400) AS t) x RETURNING id`,
    [jobId, extra.trigger ?? 'manual', status, live, daysAgo, extra.retryOf ?? null],
  );
  return rows[0].id;
}

const ids = async () => new Set((await env.pool.query('SELECT id FROM executions')).rows.map((r) => r.id as string));
const prune = (cursor = newRetentionCursor(), rules = RULES, scan = 3) =>
  pruneOnce(
    { store: env.store, queue: env.queue, logger: recorder().logger },
    { rules, cursor, deadline: Date.now() + 30_000, scan },
  );

describe('retention', () => {
  it('deletes expired history and nothing else: live attempts, recent rows, dead ones within their window, kept jobs', async () => {
    const normal = await job();
    const forever = await job(0);
    const short = await job(1);
    const long = await job(200);
    const expect_: Record<string, boolean> = {}; // id -> should survive
    const add = async (keep: boolean, ...args: Parameters<typeof row>) => {
      const id = await row(...args);
      expect_[id] = keep;
      return id;
    };
    // Oldest first, as ids grow with time.
    await add(false, long, 'succeeded', 250);
    await add(true, forever, 'succeeded', 400);
    await add(true, normal, 'queued', 120); // live rows are never deleted, however old
    await add(true, normal, 'running', 110);
    await add(true, normal, 'retrying', 105);
    const oldDead = await add(false, normal, 'dead', 100);
    await add(false, normal, 'failed', 95);
    const replayedDead = await add(true, normal, 'dead', 50);
    await add(true, normal, 'failed', 45);
    await add(false, normal, 'succeeded', 40);
    await add(false, normal, 'cancelled', 40);
    await add(false, normal, 'skipped', 40);
    // A replay of a dead execution that is still kept stays with it (the dead-letter page links the two).
    const replay = await add(true, normal, 'succeeded', 40, { trigger: 'replay', retryOf: replayedDead });
    await env.pool.query('UPDATE executions SET replayed_by = $1 WHERE id = $2', [replay, replayedDead]);
    await add(true, long, 'succeeded', 40);
    await add(true, normal, 'succeeded', 10);
    await add(false, short, 'succeeded', 2);
    await add(true, short, 'dead', 2); // dead ones keep the dead window even on a job with a short retention
    await add(true, short, 'succeeded', 0.5);
    await add(true, normal, 'succeeded', 0);
    // The dead-letter list holds the dead ids, newest first.
    await env.queue.settle({ lane: 'short', acks: [], dead: [oldDead, replayedDead], push: [] });
    expect(await env.queue.deadIds('short')).toEqual([replayedDead, oldDead]);
    // Roll-up rows go with their window too.
    await env.pool.query(
      `INSERT INTO execution_minutes (minute, status, count, duration_ms) VALUES
         (date_trunc('minute', now() - interval '100 days'), 'dead', 1, 5),
         (date_trunc('minute', now() - interval '40 days'), 'succeeded', 7, 70),
         (date_trunc('minute', now() - interval '40 days'), 'failed', 2, 20),
         (date_trunc('minute', now() - interval '1 day'), 'succeeded', 3, 30)`,
    );

    const first = await prune();
    expect(first.batches).toBeGreaterThan(2); // small batches, the cursor carried between them
    const second = await prune(); // a new process: a fresh cursor rescans from the start, finding nothing more
    expect(second.deleted).toBe(0);

    const left = await ids();
    for (const [id, keep] of Object.entries(expect_)) expect({ id, kept: left.has(id) }).toEqual({ id, kept: keep });
    expect(first.deleted).toBe(Object.values(expect_).filter((k) => !k).length);
    expect(await env.queue.deadIds('short')).toEqual([replayedDead]);
    expect(first.deadLettered).toBe(1);
    const minutes = await env.pool.query(`SELECT status, count FROM execution_minutes ORDER BY minute, status`);
    expect(minutes.rows.map((r) => `${r.status}:${r.count}`)).toEqual(['failed:2', 'succeeded:3']);
    expect(first.minutes).toBe(8);
  });

  it('deletes only roll-up minutes the monotonic totals already hold (at or before their watermark)', async () => {
    await env.pool.query(`UPDATE execution_totals_mark SET folded_through = now() - interval '60 days'`);
    await env.pool.query(
      `INSERT INTO execution_minutes (minute, status, lane, count, duration_ms) VALUES
         (date_trunc('minute', now() - interval '70 days'), 'succeeded', 'short', 1, 1),
         (date_trunc('minute', now() - interval '40 days'), 'succeeded', 'short', 2, 2)`,
    );
    const result = await prune();
    expect(result.minutes).toBe(1);
    const { rows } = await env.pool.query(`SELECT count FROM execution_minutes`);
    expect(rows.map((r) => Number(r.count))).toEqual([2]);
  });

  it('0 keeps everything by default, while a job with its own retention is still pruned', async () => {
    const normal = await job();
    const short = await job(5);
    const kept = await row(normal, 'succeeded', 400);
    const gone = await row(short, 'succeeded', 6);
    const recent = await row(short, 'succeeded', 4);
    const result = await prune(newRetentionCursor(), { historyMs: null, deadMs: null });
    expect(result.deleted).toBe(1);
    const left = await ids();
    expect([left.has(kept), left.has(gone), left.has(recent)]).toEqual([true, false, true]);
  });

  it('continues where it stopped: a pass out of time resumes at its cursor, and rows newer than the frontier wait', async () => {
    const normal = await job();
    for (let i = 0; i < 5; i++) await row(normal, 'succeeded', 40);
    const fresh = await row(normal, 'succeeded', 29);
    const cursor = newRetentionCursor();
    const none = await pruneOnce(
      { store: env.store, queue: env.queue, logger: recorder().logger },
      { rules: RULES, cursor, deadline: Date.now() - 1 },
    );
    expect(none.batches).toBe(0);
    await prune(cursor, RULES, 2);
    expect((await ids()).size).toBe(1);
    expect(BigInt(cursor.afterId)).toBeLessThan(BigInt(fresh)); // the cursor waits before the row that has not expired
    await env.pool.query(
      `UPDATE executions SET queued_at = now() - interval '31 days', finished_at = now() - interval '31 days'`,
    );
    await prune(cursor, RULES, 2); // no rescan due: the same cursor reaches it
    expect((await ids()).size).toBe(0);
  });

  it('works off a large backlog in batches while workers run, losing nothing live', async () => {
    const e = engine(env);
    try {
      const old = await job();
      await env.pool.query(
        `INSERT INTO executions (job_id, trigger, status, lane, scheduled_for, queued_at, started_at, finished_at, duration_ms, output)
         SELECT $1, 'manual', CASE WHEN g % 100 = 0 THEN 'failed' ELSE 'succeeded' END, 'short', t, t, t, t, 3, repeat('x', 200)
         FROM generate_series(1, 60000) g, LATERAL (SELECT now() - interval '60 days' + g * interval '1 second' AS t) x`,
        [old],
      );
      const live = await createJob(e.deps, jobSpec({ handler: 'noop' }));
      await e.worker({ concurrency: 20 });
      const cursor = newRetentionCursor();
      const triggered: string[] = [];
      let passes = 0;
      for (;;) {
        // Triggers keep arriving and running while the backlog is pruned, 200 ms of pruning at a time.
        const batch = await env.store.executionsEnqueueMany({
          jobId: live.id,
          payloads: Array.from({ length: 100 }, () => null),
        });
        await env.queue.push(batch);
        triggered.push(...batch.map((b) => b.id));
        const result = await pruneOnce(
          { store: env.store, queue: env.queue, logger: recorder().logger },
          { rules: RULES, cursor, deadline: Date.now() + 200, scan: 2000 },
        );
        passes++;
        if (result.deleted === 0 && passes > 1) break;
        expect(passes).toBeLessThan(200);
      }
      expect(passes).toBeGreaterThan(2); // the backlog took several bounded passes
      const { rows } = await env.pool.query(
        `SELECT status, count(*)::int AS n FROM executions WHERE job_id = $1 GROUP BY status`,
        [old],
      );
      expect(rows).toEqual([{ status: 'failed', n: 600 }]); // failed ones are inside the dead window
      await expectAllSucceed(triggered);
    } finally {
      await e.stopAll();
    }
  }, 120_000);
});

async function expectAllSucceed(idsWanted: string[]) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { rows } = await env.pool.query(
      `SELECT status, count(*)::int AS n FROM executions WHERE id = ANY($1::bigint[]) GROUP BY status`,
      [idsWanted],
    );
    if (rows.length === 1 && rows[0].status === 'succeeded' && rows[0].n === idsWanted.length) return;
    if (Date.now() > deadline) throw new Error(`not all triggered executions succeeded: ${JSON.stringify(rows)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
