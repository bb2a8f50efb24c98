/**
 * Reads cost their page, not the history: every list shape (status, job, both) reads a bounded number of buffers on
 * a history far larger than a page, before statistics exist and after ANALYZE alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXECUTION_STATUSES, type ExecutionStatus } from '@jobs/core';
import { ORDERED_PLANS_SQL, executionListQuery } from '@jobs/store';
import { createTestEnv, type TestEnv } from './support/env';

let env: TestEnv;
let jobs: string[];
const ROWS = 60_000;

beforeAll(async () => {
  env = await createTestEnv('reads');
  const { rows } = await env.pool.query(
    `INSERT INTO jobs (name, handler) SELECT 'j' || g, 'noop' FROM generate_series(1, 20) g RETURNING id`,
  );
  jobs = rows.map((r) => r.id as string);
  // 98.9% succeeded, 1% failed, a few dead, cancelled and queued; no skipped row at all.
  await env.pool.query(
    `INSERT INTO executions (job_id, trigger, status, lane, scheduled_for, queued_at, started_at, finished_at, duration_ms, output)
     SELECT ($1::bigint[])[1 + g % 20], 'cron',
            CASE WHEN g % 2000 = 7 THEN 'dead' WHEN g % 100 = 3 THEN 'failed' WHEN g % 5000 = 11 THEN 'cancelled'
                 WHEN g % 7000 = 13 THEN 'queued' ELSE 'succeeded' END,
            'short', t, t, t, t, 5, repeat('x', 200)
     FROM generate_series(1, ${ROWS}) g, LATERAL (SELECT now() - interval '30 days' + g * interval '40 seconds' AS t) x`,
    [jobs],
  );
}, 60_000);
afterAll(async () => {
  await env.cleanup();
});

/** Buffers (shared hit + read) a statement touches, and its plan's node types. */
async function cost(query: { text: string; values: unknown[]; ordered: boolean }): Promise<{ buffers: number; nodes: string[] }> {
  const client = await env.pool.connect();
  let rows: any[];
  try {
    // As executionList sends it: in a transaction after ORDERED_PLANS_SQL when `ordered`.
    await client.query('BEGIN');
    if (query.ordered) await client.query(ORDERED_PLANS_SQL);
    ({ rows } = await client.query({ text: `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${query.text}`, values: query.values }));
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  const plan = rows[0]['QUERY PLAN'][0].Plan;
  const nodes: string[] = [];
  const walk = (n: any) => {
    nodes.push(`${n['Node Type']}${n['Index Name'] ? `:${n['Index Name']}` : ''}`);
    for (const c of n.Plans ?? []) walk(c);
  };
  walk(plan);
  return { buffers: (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0), nodes };
}

const shapes: { label: string; status?: ExecutionStatus; job: boolean }[] = [
  { label: 'no filter', job: false },
  { label: 'job', job: true },
  ...EXECUTION_STATUSES.flatMap((status) => [
    { label: `status=${status}`, status, job: false },
    { label: `job + status=${status}`, status, job: true },
  ]),
];

describe('list reads are O(page)', () => {
  for (const stats of ['without statistics', 'after ANALYZE']) {
    it(`every filter reads a bounded number of buffers, ${stats}`, async () => {
      if (stats === 'after ANALYZE') await env.pool.query('ANALYZE executions');
      const heap = (await env.pool.query(`SELECT pg_relation_size('executions') / 8192 AS pages`)).rows[0].pages;
      expect(Number(heap)).toBeGreaterThan(2000); // the history is far bigger than a page
      const report: Record<string, { buffers: number; nodes: string[] }> = {};
      for (const shape of shapes) {
        const query = executionListQuery({ status: shape.status, jobId: shape.job ? jobs[3] : undefined, limit: 50 });
        const first = await cost(query);
        report[shape.label] = first;
        // The next page, from a cursor deep in the history, costs the same.
        const deep = await cost(executionListQuery({ status: shape.status, jobId: shape.job ? jobs[3] : undefined, limit: 50, before: String(ROWS / 2) }));
        report[`${shape.label} (deep)`] = deep;
      }
      if (process.env.SHOW_PLANS) console.log(stats, JSON.stringify(report, null, 1));
      for (const [label, r] of Object.entries(report)) {
        expect({ label, nodes: r.nodes.filter((n) => n.startsWith('Seq Scan') || n === 'Sort') }).toEqual({ label, nodes: [] });
        // A page of 50 rows in a 20-job history: at most a few hundred buffers (a scan would read thousands).
        expect({ label, ok: r.buffers < 400, buffers: r.buffers }).toMatchObject({ label, ok: true });
      }
    }, 60_000);
  }
});
