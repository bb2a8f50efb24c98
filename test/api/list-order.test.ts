/**
 * Every paginated list, API and dashboard, over a few hundred rows whose ids cross digit counts (9 to 10, 99 to
 * 100): walked page by page from any cursor, with any page size and filter, it yields exactly the rows below the
 * cursor that match, each once, newest (highest id) first in numeric order. A list sorted as text would put 10..13
 * below 9 and never reach them.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formClient, unescapeHtml, type FormClient } from '../browser/form-client';
import { apiHarness, type Harness } from './harness';

const ROWS = 260;
const STATUSES = ['succeeded', 'failed', 'dead', 'queued'] as const;
const AUDIT_KEYS = ['alice', 'bob', 'carol'] as const;
const AUDIT_ACTIONS = ['job.create', 'job.pause', 'job.trigger'] as const;

let h: Harness;
let b: FormClient;
/** Rows as the lists should see them, ids as numbers. */
let jobs: { id: number; status: string }[];
let executions: { id: number; jobId: string; status: string }[];
let audit: { id: number; key: string; action: string; target: string; outcome: string }[];

beforeAll(async () => {
  h = await apiHarness();
  b = formClient(h.app);
  jobs = [];
  for (let i = 0; i < ROWS; i++) {
    const job = await h.createJob({ name: `order-${i}` });
    jobs.push({ id: Number(job.id), status: 'active' });
  }
  // Some paused: the status filter of both lists.
  await h.env.pool.query(`UPDATE jobs SET status = 'paused' WHERE id % 3 = 0`);
  for (const job of jobs) if (job.id % 3 === 0) job.status = 'paused';

  const chosen = jobs.slice(0, 3).map((j) => String(j.id));
  const { rows: inserted } = await h.env.pool.query(
    `INSERT INTO executions (job_id, trigger, status, lane, scheduled_for, finished_at)
     SELECT ($1::bigint[])[1 + g % 3], 'manual', ($2::text[])[1 + (g * 7) % 4], 'short',
            now() - g * interval '1 second', CASE WHEN ($2::text[])[1 + (g * 7) % 4] <> 'queued' THEN now() END
     FROM generate_series(1, $3::int) g ORDER BY g
     RETURNING id, job_id, status`,
    [chosen, STATUSES, ROWS],
  );
  executions = inserted.map((r) => ({ id: Number(r.id), jobId: String(r.job_id), status: r.status }));

  // The rows the job creations above wrote, then more of every kind.
  await h.env.pool.query(
    `INSERT INTO audit_log (key_name, action, target, outcome)
     SELECT ($1::text[])[1 + g % 3], ($2::text[])[1 + (g * 5) % 3], 'job:' || (g % 4), CASE WHEN g % 5 = 0 THEN 'refused' ELSE 'ok' END
     FROM generate_series(1, $3::int) g ORDER BY g`,
    [AUDIT_KEYS, AUDIT_ACTIONS, ROWS],
  );
  const { rows: all } = await h.env.pool.query(`SELECT id, key_name, action, target, outcome FROM audit_log`);
  audit = all.map((r) => ({
    id: Number(r.id),
    key: r.key_name,
    action: r.action,
    target: r.target,
    outcome: r.outcome,
  }));
}, 120_000);

afterAll(async () => {
  await h?.cleanup();
});

/** What a walk from `cursor` must yield: the matching rows below it, highest id first. */
function expected<T extends { id: number }>(rows: T[], match: (row: T) => boolean, cursor: number | null): number[] {
  return rows
    .filter((r) => match(r) && (cursor === null || r.id < cursor))
    .map((r) => r.id)
    .sort((x, y) => y - x);
}

/** Walks an API list from `cursor` to its last page, checking each page's shape; returns the ids in order. */
async function walkApi(path: string, query: Record<string, string>, limit: number, cursor: number | null) {
  const ids: number[] = [];
  let next: string | null = cursor === null ? null : String(cursor);
  for (let pages = 0; ; pages++) {
    expect(pages, 'more pages than rows').toBeLessThanOrEqual(ROWS * 2 + 2);
    const params = new URLSearchParams({ ...query, limit: String(limit) });
    if (next !== null) params.set('cursor', next);
    const res = await h.call('GET', `${path}?${params}`);
    expect(res.status, `${path}?${params}`).toBe(200);
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    ids.push(...res.body.data.map((row: { id: string }) => Number(row.id)));
    next = res.body.next_cursor;
    if (next === null) return ids;
    // A page that says more follows is full, and the cursor is its last row.
    expect(res.body.data.length).toBe(limit);
    expect(next).toBe(res.body.data[res.body.data.length - 1].id);
  }
}

/** Walks a dashboard list by its "Older" links; `idsOf` reads a page's row ids from its table body. */
async function walkDashboard(path: string, query: Record<string, string>, cursor: number | null, idsOf: IdsOf) {
  const ids: number[] = [];
  const params = new URLSearchParams(query);
  if (cursor !== null) params.set('before', String(cursor));
  let url: string | null = `${path}?${params}`;
  for (let pages = 0; url !== null; pages++) {
    expect(pages, 'more pages than rows').toBeLessThanOrEqual(ROWS + 2);
    const page = await b.request('GET', url);
    expect(page.status, url).toBe(200);
    ids.push(...idsOf(tbody(page.text)));
    const older = /<nav class="pager"[^>]*>\s*<a href="([^"]+)"/.exec(page.text);
    url = older ? unescapeHtml(older[1]!) : null;
  }
  return ids;
}

type IdsOf = (body: string) => number[];

/** The body of the page's first table ('' when the list is empty). */
function tbody(html: string): string {
  const match = /<tbody>([\s\S]*?)<\/tbody>/.exec(html);
  return match ? match[1]! : '';
}

/** Ids of the links to `/<kind>/<id>` in a table body, each once, in order. */
const linkIds =
  (kind: string): IdsOf =>
  (body) => {
    const ids: number[] = [];
    for (const m of body.matchAll(new RegExp(`href="/${kind}/(\\d+)"`, 'g'))) {
      const id = Number(m[1]);
      if (!ids.includes(id)) ids.push(id);
    }
    return ids;
  };

const cursorArb = (ids: () => number[]) =>
  fc.oneof(
    fc.constant(null),
    fc.integer({ min: 1, max: 4 * ROWS }),
    fc.nat().map((i) => ids()[i % ids().length]!),
  );
const limitArb = fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 200 }));
const RUNS = { numRuns: 20 };

describe('API lists page in numeric order and reach every row', () => {
  it('GET /api/v1/jobs', async () => {
    await fc.assert(
      fc.asyncProperty(
        limitArb,
        cursorArb(() => jobs.map((j) => j.id)),
        fc.constantFrom(undefined, 'active', 'paused'),
        async (limit, cursor, status) => {
          const ids = await walkApi('/api/v1/jobs', status ? { status } : {}, limit, cursor);
          expect(ids).toEqual(expected(jobs, (j) => !status || j.status === status, cursor));
        },
      ),
      { ...RUNS, examples: [[4, null, undefined]] },
    );
  });

  it('GET /api/v1/executions and /api/v1/jobs/{id}/executions', async () => {
    const jobIds = [...new Set(executions.map((e) => e.jobId))];
    await fc.assert(
      fc.asyncProperty(
        limitArb,
        cursorArb(() => executions.map((e) => e.id)),
        fc.constantFrom(undefined, ...STATUSES),
        fc.constantFrom(undefined, ...jobIds),
        fc.boolean(),
        async (limit, cursor, status, jobId, nested) => {
          const query: Record<string, string> = status ? { status } : {};
          const path = nested && jobId ? `/api/v1/jobs/${jobId}/executions` : '/api/v1/executions';
          if (jobId && !nested) query.job_id = jobId;
          const ids = await walkApi(path, query, limit, cursor);
          expect(ids).toEqual(
            expected(executions, (e) => (!status || e.status === status) && (!jobId || e.jobId === jobId), cursor),
          );
        },
      ),
      { ...RUNS, examples: [[4, null, undefined, undefined, false]] },
    );
  });

  it('GET /api/v1/audit', async () => {
    await fc.assert(
      fc.asyncProperty(
        limitArb,
        cursorArb(() => audit.map((a) => a.id)),
        fc.record(
          {
            key: fc.constantFrom(...AUDIT_KEYS),
            action: fc.constantFrom(...AUDIT_ACTIONS),
            target: fc.constantFrom('job:0', 'job:1', 'job:3'),
            outcome: fc.constantFrom('ok', 'refused'),
          },
          { requiredKeys: [] },
        ),
        async (limit, cursor, filter) => {
          const ids = await walkApi('/api/v1/audit', filter, limit, cursor);
          expect(ids).toEqual(
            expected(
              audit,
              (a) =>
                (!filter.key || a.key === filter.key) &&
                (!filter.action || a.action === filter.action) &&
                (!filter.target || a.target === filter.target) &&
                (!filter.outcome || a.outcome === filter.outcome),
              cursor,
            ),
          );
        },
      ),
      { ...RUNS, examples: [[4, null, {}]] },
    );
  });
});

describe('dashboard lists page in numeric order and reach every row', () => {
  const DASH_RUNS = { numRuns: 10 };

  it('/jobs', async () => {
    await fc.assert(
      fc.asyncProperty(
        cursorArb(() => jobs.map((j) => j.id)),
        fc.constantFrom(undefined, 'active', 'paused'),
        async (cursor, status) => {
          const ids = await walkDashboard('/jobs', status ? { status } : {}, cursor, linkIds('jobs'));
          expect(ids).toEqual(expected(jobs, (j) => !status || j.status === status, cursor));
        },
      ),
      { ...DASH_RUNS, examples: [[null, undefined]] },
    );
  });

  it('/executions and /dead', async () => {
    const jobIds = [...new Set(executions.map((e) => e.jobId))];
    await fc.assert(
      fc.asyncProperty(
        cursorArb(() => executions.map((e) => e.id)),
        fc.constantFrom(undefined, ...STATUSES),
        fc.constantFrom(undefined, ...jobIds),
        fc.boolean(),
        async (cursor, status, jobId, dead) => {
          if (dead) {
            const ids = await walkDashboard('/dead', {}, cursor, linkIds('executions'));
            expect(ids).toEqual(expected(executions, (e) => e.status === 'dead', cursor));
            return;
          }
          const query: Record<string, string> = {};
          if (status) query.status = status;
          if (jobId) query.job_id = jobId;
          const ids = await walkDashboard('/executions', query, cursor, linkIds('executions'));
          expect(ids).toEqual(
            expected(executions, (e) => (!status || e.status === status) && (!jobId || e.jobId === jobId), cursor),
          );
        },
      ),
      {
        ...DASH_RUNS,
        examples: [
          [null, undefined, undefined, false],
          [null, undefined, undefined, true],
        ],
      },
    );
  });

  it('/audit', async () => {
    // The page shows no ids: each row's target, key and action identify it among rows inserted with distinct ones.
    const { rows } = await h.env.pool.query(`UPDATE audit_log SET target = 'row:' || id RETURNING id`);
    expect(rows.length).toBe(audit.length);
    const auditIds: IdsOf = (body) => [...unescapeHtml(body).matchAll(/>row:(\d+)</g)].map((m) => Number(m[1]));
    await fc.assert(
      fc.asyncProperty(
        cursorArb(() => audit.map((a) => a.id)),
        fc.constantFrom(undefined, ...AUDIT_KEYS),
        fc.constantFrom(undefined, ...AUDIT_ACTIONS),
        async (cursor, key, action) => {
          const query: Record<string, string> = {};
          if (key) query.key = key;
          if (action) query.action = action;
          const ids = await walkDashboard('/audit', query, cursor, auditIds);
          expect(ids).toEqual(
            expected(audit, (a) => (!key || a.key === key) && (!action || a.action === action), cursor),
          );
        },
      ),
      { ...DASH_RUNS, examples: [[null, undefined, undefined]] },
    );
  });
});
