/**
 * Reads cost their page, not the history: every list shape (status, job, both), the stats and the minute chart read
 * a bounded number of buffers on a history far larger than a page, before statistics exist and after ANALYZE alike,
 * and none of them is compiled by JIT however its cost is estimated.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXECUTION_STATUSES, type ExecutionStatus } from '@jobs/core';
import {
  EXECUTION_STATS_SQL,
  ORDERED_PLANS_SQL,
  executionStatsSql,
  OUTCOMES_PER_MINUTE_SQL,
  executionListQuery,
} from '@jobs/store';
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
  // The roll-up of the same history, in minute order as the finishing statements write it.
  await env.pool.query(
    `INSERT INTO execution_minutes (minute, status, lane, count, duration_ms)
     SELECT date_trunc('minute', finished_at), status, lane, count(*), sum(duration_ms) FROM executions
     WHERE finished_at IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
  );
}, 60_000);
afterAll(async () => {
  await env.cleanup();
});

interface Cost {
  buffers: number;
  nodes: string[];
  jit: boolean;
  /** The planner's estimate; under PostgreSQL's default jit_above_cost (100,000) nothing is compiled. */
  estimate: number;
}

const JIT_ABOVE_COST_DEFAULT = 100_000;

/** Buffers (shared hit + read) a statement touches, its plan's node types, and whether JIT compiled it. */
async function cost(query: { text: string; values: unknown[]; ordered: boolean; before?: string }): Promise<Cost> {
  const client = await env.pool.connect();
  let rows: any[];
  try {
    // As executionList sends it: in a transaction after ORDERED_PLANS_SQL when `ordered` (`before`: what precedes
    // the statement in its message, for the stats). JIT would compile anything costed above nothing.
    await client.query('BEGIN');
    await client.query(`SET LOCAL jit_above_cost = 0`);
    if (query.ordered) await client.query(ORDERED_PLANS_SQL);
    if (query.before) await client.query(query.before);
    ({ rows } = await client.query({
      text: `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${query.text}`,
      values: query.values,
    }));
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
  return {
    buffers: (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0),
    nodes,
    jit: rows[0]['QUERY PLAN'][0].JIT !== undefined,
    estimate: plan['Total Cost'],
  };
}

/**
 * The stats statements (after their first, which turns JIT off), as the first read sends them (EXECUTION_STATS_SQL)
 * and as a reader holding the minutes up to three minutes ago does, and the minute chart's.
 */
function summaryStatements(): {
  label: string;
  query: { text: string; values: unknown[]; ordered: boolean; before?: string };
}[] {
  const [off, ...reads] = EXECUTION_STATS_SQL.split(/;\n/);
  const [, , held] = executionStatsSql(new Date(Math.floor(Date.now() / 60_000) * 60_000 - 180_000)).split(/;\n/);
  return [
    ...reads.map((text, i) => ({
      label: `stats statement ${i + 1}`,
      query: { text, values: [], ordered: false, before: off },
    })),
    { label: 'stats statement 2, minutes held', query: { text: held!, values: [], ordered: false, before: off } },
    { label: 'minute chart, 60 minutes', query: { text: OUTCOMES_PER_MINUTE_SQL, values: [60], ordered: false } },
  ];
}

const shapes: { label: string; status?: ExecutionStatus; job: boolean; names?: boolean; iso?: boolean }[] = [
  { label: 'no filter', job: false },
  // As the API's lists read them (executionListIso): the instants as UTC text.
  { label: 'no filter, instants as text', job: false, iso: true },
  { label: 'job, instants as text', job: true, iso: true },
  { label: 'job + status=succeeded, instants as text', status: 'succeeded', job: true, iso: true },
  { label: 'status=dead, instants as text', status: 'dead', job: false, iso: true },
  // As the dashboard's lists read them: each row's job name in the same statement.
  { label: 'no filter, job names', job: false, names: true },
  { label: 'status=dead, job names', status: 'dead', job: false, names: true },
  { label: 'job + status=failed, job names', status: 'failed', job: true, names: true },
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
      const report: Record<string, Cost & { ordered: boolean }> = {};
      for (const shape of shapes) {
        const query = executionListQuery(
          { status: shape.status, jobId: shape.job ? jobs[3] : undefined, limit: 50, jobNames: shape.names },
          shape.iso,
        );
        const first = await cost(query);
        report[shape.label] = { ...first, ordered: query.ordered };
        // The next page, from a cursor deep in the history, costs the same.
        const deep = await cost(
          executionListQuery(
            {
              status: shape.status,
              jobId: shape.job ? jobs[3] : undefined,
              limit: 50,
              before: String(ROWS / 2),
              jobNames: shape.names,
            },
            shape.iso,
          ),
        );
        report[`${shape.label} (deep)`] = { ...deep, ordered: query.ordered };
      }
      if (process.env.SHOW_PLANS) console.log(stats, JSON.stringify(report, null, 1));
      for (const [label, r] of Object.entries(report)) {
        expect({ label, nodes: r.nodes.filter((n) => n.startsWith('Seq Scan') || n === 'Sort') }).toEqual({
          label,
          nodes: [],
        });
        // A page of 50 rows in a 20-job history: at most a few hundred buffers (a scan would read thousands).
        expect({ label, ok: r.buffers < 400, buffers: r.buffers }).toMatchObject({ label, ok: true });
        // Lists of the rare and live statuses run with JIT off (ORDERED_PLANS_SQL: the test sets jit_above_cost to
        // 0, so anything else would be compiled); the others are costed as the page they read.
        if (r.ordered) expect({ label, jit: r.jit }).toEqual({ label, jit: false });
        else
          expect({ label, ok: r.estimate < JIT_ABOVE_COST_DEFAULT, estimate: r.estimate }).toMatchObject({
            label,
            ok: true,
          });
      }
    }, 60_000);

    it(`the stats and the minute chart read their window, not the history, ${stats}`, async () => {
      if (stats === 'after ANALYZE') await env.pool.query('ANALYZE executions, execution_minutes');
      const rollup = Number(
        (await env.pool.query(`SELECT pg_relation_size('execution_minutes') / 8192 AS pages`)).rows[0].pages,
      );
      expect(rollup).toBeGreaterThan(100); // 28 days of minutes: a scan would read all of them
      const report: Record<string, Cost> = {};
      for (const { label, query } of summaryStatements()) report[label] = await cost(query);
      if (process.env.SHOW_PLANS) console.log(stats, JSON.stringify(report, null, 1));
      for (const [label, r] of Object.entries(report)) {
        expect({ label, seq: r.nodes.filter((n) => n === 'Seq Scan') }).toEqual({ label, seq: [] });
        // The stats run with JIT off (their first statement); the chart is costed as its window.
        if (label.startsWith('stats')) expect({ label, jit: r.jit }).toEqual({ label, jit: false });
        else
          expect({ label, ok: r.estimate < JIT_ABOVE_COST_DEFAULT, estimate: r.estimate }).toMatchObject({
            label,
            ok: true,
          });
        // The newest 1,000 rows, or a day of minutes (a 28th of the roll-up), or the live rows: far below a scan.
        expect({ label, ok: r.buffers < Math.min(400, rollup / 4), buffers: r.buffers }).toMatchObject({
          label,
          ok: true,
        });
      }
    }, 60_000);
  }
});

describe('a list with job names', () => {
  it("carries each row's live job name, null for a deleted job, as jobNames would have read them", async () => {
    await env.pool.query(`UPDATE jobs SET deleted_at = now() WHERE id = $1`, [jobs[4]]);
    const rows = await env.store.executionList({ limit: 50, jobNames: true });
    const live = await env.store.jobNames(
      rows.map((r) => r.jobId),
      { live: true },
    );
    expect(rows.some((r) => r.jobId === jobs[4]) && rows.some((r) => r.jobId !== jobs[4])).toBe(true);
    for (const r of rows) expect({ id: r.id, name: r.jobName }).toEqual({ id: r.id, name: live.get(r.jobId) ?? null });
    expect((await env.store.executionList({ status: 'failed', limit: 1 }))[0]!.jobName).toBeUndefined();
  });
});
