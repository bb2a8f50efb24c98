/**
 * history (only when named: `--only=history`): reads, pruning and disk use with a long history.
 *   Builds `history-n` executions (default 5,000,000) by SQL over 30 days for 1,000 jobs (98.95% succeeded, 1% failed,
 *   0.05% dead, 200-byte outputs) and their roll-up minutes, beside an empty database with the same jobs and a
 *   database with the same jobs and one page of rows of every list shape (buildPage: an empty database renders no
 *   rows, so it cannot tell what the history costs from what a page of rows costs); for the two execution pages the
 *   empty side is a database of the same jobs and that one execution (buildSingle), not a 404. Measures p50/p95 of every list
 *   endpoint, the stats and the dashboard pages in all three (in process, app.request), first as built (no
 *   statistics: autovacuum may be off) and again after ANALYZE; bytes on disk per execution; then the
 *   retention pass on the rows older than 20 days while a worker drains `history-drain` jobs, with the drain's rate
 *   beside a drain of the same size without pruning, and the WAL the deletes wrote.
 */
import { createApp, type ApiDeps } from '@jobs/api';
import { newRetentionCursor, pruneOnce, systemClock } from '@jobs/core';
import { dashboardRoutes } from '@jobs/dashboard';
import { liveOutputReader, queueKeys } from '@jobs/queue';
import { recorder, type TestEnv } from '../../support/env';
import { engine } from '../../support/engine';
import { benchEnv } from '../lib/envs';
import type { Collector } from '../lib/result';
import type { BenchContext } from '../lib/options';

const DAY = 86_400_000;
const JOBS = 1000;
const REPEATS = 200;

type Timing = { p50: number; p95: number; status: number };

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function build(
  env: TestEnv,
  n: number,
  progress: (m: string) => void,
): Promise<{ firstJob: string; someId: string | null }> {
  const { rows } = await env.pool.query(
    `INSERT INTO jobs (name, cron_expr, handler) SELECT 'hist-' || g, '* * * * *', 'noop' FROM generate_series(1, $1::int) g RETURNING id`,
    [JOBS],
  );
  const firstJob = rows[0].id as string;
  const chunk = 1_000_000;
  for (let from = 1; from <= n; from += chunk) {
    const t = performance.now();
    await env.pool.query(
      `INSERT INTO executions (job_id, trigger, status, lane, scheduled_for, queued_at, started_at, finished_at, duration_ms,
                               exit_code, output, error)
       SELECT $1::bigint + (g % ${JOBS}), 'cron', x.st, 'short', x.t, x.t, x.t, x.t + interval '5 ms', 5,
              CASE WHEN x.st = 'succeeded' THEN 0 ELSE 1 END, repeat('x', 199) || E'\\n',
              CASE WHEN x.st = 'succeeded' THEN NULL ELSE 'exit code 1' END
       FROM generate_series($2::int, $3::int) g,
            LATERAL (SELECT now() - interval '30 days' + (g::double precision / $4) * interval '30 days' AS t,
                            CASE WHEN g % 2000 = 0 THEN 'dead' WHEN g % 100 = 1 THEN 'failed' ELSE 'succeeded' END AS st) x`,
      [firstJob, from, Math.min(n, from + chunk - 1), n],
    );
    progress(
      `history: ${Math.min(n, from + chunk - 1).toLocaleString('en-US')} of ${n.toLocaleString('en-US')} rows (${Math.round(performance.now() - t)} ms)`,
    );
  }
  if (n > 0) await rollUp(env);
  const some = await env.pool.query(`SELECT id FROM executions WHERE status = 'dead' ORDER BY id DESC LIMIT 1`);
  return { firstJob, someId: some.rows[0]?.id ?? null };
}

/**
 * The roll-up of what the executions table holds, written in minute order as the finishing statements write it
 * (minute by minute), so a window of minutes sits in a few adjacent heap pages as in production.
 */
async function rollUp(env: TestEnv): Promise<void> {
  await env.pool.query(
    `INSERT INTO execution_minutes (minute, status, lane, count, duration_ms)
     SELECT date_trunc('minute', finished_at), status, lane, count(*), sum(duration_ms) FROM executions GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
  );
}

/**
 * The second baseline: the same jobs and one page of rows (51) of every list shape the history has, within the
 * last hour: each of succeeded, failed and dead once for job {J} and once spread over 51 other jobs (newest), with
 * their roll-up minutes. Every list and page then renders what it renders on the history, from a table of 306 rows.
 */
async function buildPage(
  env: TestEnv,
  progress: (m: string) => void,
): Promise<{ firstJob: string; someId: string | null }> {
  const built = await build(env, 0, progress);
  await env.pool.query(
    `INSERT INTO executions (job_id, trigger, status, lane, scheduled_for, queued_at, started_at, finished_at, duration_ms,
                             exit_code, output, error)
     SELECT CASE WHEN spread THEN $1::bigint + 100 + (g % 51) ELSE $1::bigint + 7 END, 'cron', st, 'short', t, t, t,
            t + interval '5 ms', 5, CASE WHEN st = 'succeeded' THEN 0 ELSE 1 END, repeat('x', 199) || E'\\n',
            CASE WHEN st = 'succeeded' THEN NULL ELSE 'exit code 1' END
     FROM generate_series(306, 1, -1) g,
          LATERAL (SELECT now() - g * interval '10 seconds' AS t, g <= 153 AS spread,
                          (ARRAY['succeeded', 'failed', 'dead'])[1 + ((g - 1) % 153) / 51] AS st) x`,
    [built.firstJob],
  );
  await rollUp(env);
  const some = await env.pool.query(`SELECT id FROM executions WHERE status = 'dead' ORDER BY id DESC LIMIT 1`);
  return { firstJob: built.firstJob, someId: some.rows[0]?.id ?? null };
}

/**
 * The empty side of the execution pages: the same jobs and the one execution they show (a copy of the history's,
 * with its id), so both sides render the same page where the empty database would answer 404.
 */
async function buildSingle(
  env: TestEnv,
  from: TestEnv,
  id: string | null,
  progress: (m: string) => void,
): Promise<{ firstJob: string; someId: string | null }> {
  const built = await build(env, 0, progress);
  const source = await from.pool.query(
    `SELECT row_to_json(e) AS row, (SELECT min(id) FROM jobs) AS first_job FROM executions e WHERE id = $1`,
    [id],
  );
  const row = source.rows[0];
  if (!row) return built;
  // The job of the same index among the same 1,000 jobs.
  row.row.job_id = String(BigInt(row.row.job_id) - BigInt(row.first_job) + BigInt(built.firstJob));
  await env.pool.query(
    `INSERT INTO executions OVERRIDING SYSTEM VALUE SELECT * FROM json_populate_record(NULL::executions, $1)`,
    [row.row],
  );
  return { firstJob: built.firstJob, someId: id };
}

function appFor(env: TestEnv) {
  const rec = recorder();
  const deps: ApiDeps = {
    store: env.store,
    queue: env.queue,
    clock: systemClock,
    sink: rec.sink,
    logger: rec.logger,
    apiKeys: [],
    bodyLimitBytes: 256 * 1024,
    shortLaneMaxTimeoutMs: 600_000,
    workerActiveWithinMs: 60_000,
    liveOutput: liveOutputReader(env.redis, queueKeys(env.prefix)),
  };
  return createApp(deps, [dashboardRoutes]);
}

/**
 * p50/p95 of `path` on each app, the requests taken in turn (one to each app, then again) so that a burst of load
 * on the shared machine falls on every side alike.
 */
async function timeRequests(apps: { app: ReturnType<typeof createApp>; path: string }[]): Promise<Timing[]> {
  const status = apps.map(() => 0);
  const times: number[][] = apps.map(() => []);
  for (let i = 0; i < 3 + REPEATS; i++) {
    for (const [k, { app, path }] of apps.entries()) {
      const t = performance.now();
      const res = await app.request(path);
      await res.arrayBuffer();
      if (i >= 3) times[k]!.push(performance.now() - t);
      status[k] = res.status;
    }
  }
  return times.map((t, k) => ({ p50: percentile(t, 50), p95: percentile(t, 95), status: status[k]! }));
}

export async function historyScenario(c: Collector, ctx: BenchContext): Promise<void> {
  const { opts, progress } = ctx;
  const n = opts['history-n'];
  const full = await benchEnv('bench_history');
  const empty = await benchEnv('bench_history_empty');
  const paged = await benchEnv('bench_history_page');
  const single = await benchEnv('bench_history_single');
  const keep = opts['history-keep'] > 0;
  try {
    const built = await build(full, n, progress);
    const blank = await build(empty, 0, progress);
    const onePage = await buildPage(paged, progress);
    const one = await buildSingle(single, full, built.someId, progress);
    const mid = String(Math.floor(n / 2));
    // {J}: a job of the 1,000 (its own 0.1% of the history); {ID}: the newest dead execution.
    const templates = [
      '/api/v1/executions',
      '/api/v1/executions?status=succeeded',
      `/api/v1/executions?status=succeeded&cursor=${mid}`,
      '/api/v1/executions?status=failed',
      '/api/v1/executions?status=dead',
      '/api/v1/executions?status=cancelled',
      '/api/v1/executions?status=skipped',
      '/api/v1/executions?status=queued',
      '/api/v1/executions?status=running',
      '/api/v1/executions?job_id={J}',
      '/api/v1/executions?job_id={J}&status=succeeded',
      '/api/v1/executions?job_id={J}&status=failed',
      '/api/v1/executions?job_id={J}&status=skipped',
      '/api/v1/executions?job_id={J}&status=queued',
      '/api/v1/jobs/{J}/executions?status=dead',
      '/api/v1/jobs',
      '/api/v1/stats',
      '/api/v1/executions/{ID}',
      '/',
      '/executions',
      '/executions?status=dead',
      '/executions?status=failed&job_id={J}',
      '/dead',
      '/jobs',
      '/jobs/{J}',
      '/executions/{ID}',
    ];
    // {ID}: on the empty side of its two pages, the database holding only that execution (and the jobs); the
    // one-page side has its own newest dead execution.
    const fill = (t: string, b: { firstJob: string; someId: string | null }) =>
      t.replace('{J}', String(BigInt(b.firstJob) + 7n)).replace('{ID}', b.someId ?? built.someId ?? '1');
    const fullApp = appFor(full);
    const emptyApp = appFor(empty);
    const pageApp = appFor(paged);
    const singleApp = appFor(single);
    // --history-keep=2 keeps the schemas as built: no statistics, no hint bits, no visibility map.
    for (const phase of keep && opts['history-keep'] >= 2
      ? ['as built, no statistics']
      : ['as built, no statistics', 'after ANALYZE']) {
      if (phase === 'after ANALYZE')
        await Promise.all([full, empty, paged, single].map((env) => env.pool.query('ANALYZE')));
      let worst = 0;
      let worstPage = 0;
      for (const label of templates) {
        const [f, e, p] = (await timeRequests([
          { app: fullApp, path: fill(label, built) },
          label.includes('{ID}')
            ? { app: singleApp, path: fill(label, one) }
            : { app: emptyApp, path: fill(label, { ...blank, someId: null }) },
          { app: pageApp, path: fill(label, onePage) },
        ])) as [Timing, Timing, Timing];
        if (f.status >= 400 || e.status >= (label.includes('{ID}') ? 400 : 500) || p.status >= 400) {
          c.check('every endpoint answers', false, `${label} answered ${f.status} / ${e.status} / ${p.status}`, phase);
        }
        const ratio = f.p50 / Math.max(e.p50, 0.01);
        const pageRatio = f.p50 / Math.max(p.p50, 0.01);
        worst = Math.max(worst, ratio);
        worstPage = Math.max(worstPage, pageRatio);
        c.add(`${label} (${phase}): p50`, 'ms', Number(f.p50.toFixed(2)), { info: true });
        c.add(`${label} (${phase}): p95`, 'ms', Number(f.p95.toFixed(2)), { info: true });
        c.add(`${label} (${phase}): empty p50`, 'ms', Number(e.p50.toFixed(2)), { info: true });
        c.add(`${label} (${phase}): empty p95`, 'ms', Number(e.p95.toFixed(2)), { info: true });
        c.add(`${label} (${phase}): one-page p50`, 'ms', Number(p.p50.toFixed(2)), { info: true });
        c.add(`${label} (${phase}): one-page p95`, 'ms', Number(p.p95.toFixed(2)), { info: true });
        c.add(`${label} (${phase}): p50 ratio full/empty`, 'x', Number(ratio.toFixed(2)), {
          target: { op: '<=', value: 2 },
        });
        c.add(`${label} (${phase}): p50 ratio full/one-page`, 'x', Number(pageRatio.toFixed(2)), {
          target: { op: '<=', value: 2 },
        });
        progress(
          `history ${phase}: ${label} p50 ${f.p50.toFixed(2)} ms (empty ${e.p50.toFixed(2)}, one page ${p.p50.toFixed(2)}), ` +
            `p95 ${f.p95.toFixed(2)} (${e.p95.toFixed(2)}, ${p.p95.toFixed(2)}): ${ratio.toFixed(2)}x / ${pageRatio.toFixed(2)}x`,
        );
      }
      c.add(`worst p50 ratio full/empty (${phase})`, 'x', Number(worst.toFixed(2)), { target: { op: '<=', value: 2 } });
      c.add(`worst p50 ratio full/one-page (${phase})`, 'x', Number(worstPage.toFixed(2)), {
        target: { op: '<=', value: 2 },
      });
    }
    c.check('every endpoint answers', true, '', 'all');

    const size = await full.pool.query(
      `SELECT pg_total_relation_size('executions') AS executions, pg_total_relation_size('execution_minutes') AS minutes`,
    );
    c.add(
      'bytes on disk per execution (table, TOAST and indexes)',
      'bytes',
      Math.round(Number(size.rows[0].executions) / Math.max(1, n)),
      { info: true },
    );
    c.add('roll-up minutes on disk', 'MB', Math.round(Number(size.rows[0].minutes) / 1e5) / 10, { info: true });

    if (keep) {
      progress(
        `history: kept, search_path ${full.schema} (${n.toLocaleString('en-US')} rows), ${empty.schema} (empty), ${paged.schema} (one page), ` +
          `${single.schema} (one execution); DROP SCHEMA ... CASCADE when done`,
      );
      return;
    }
    await pruneWhileDraining(c, ctx, full, n);
  } finally {
    if (keep) await Promise.all([full, empty, paged, single].map(release));
    else await Promise.all([full, empty, paged, single].map((env) => env.cleanup()));
  }
}

/** Closes an environment's connections and leaves its schema in place (--history-keep). */
async function release(env: TestEnv): Promise<void> {
  await env.queue.close();
  env.redis.disconnect();
  await env.pool.end();
}

/** A drain of `history-drain` noop jobs on one in-process worker; its rate from the rows' timestamps. */
async function drain(env: TestEnv, count: number, during?: { run(): Promise<void>; stop(): void }): Promise<number> {
  const e = engine(env);
  try {
    const { rows } = await env.pool.query(
      `INSERT INTO jobs (name, handler) VALUES ('drain-' || gen_random_uuid(), 'noop') RETURNING id`,
    );
    const ids: string[] = [];
    for (let left = count; left > 0; left -= 1000) {
      const batch = await env.store.executionsEnqueueMany({
        jobId: rows[0].id,
        payloads: Array.from({ length: Math.min(1000, left) }, () => null),
      });
      await env.queue.push(batch);
      ids.push(...batch.map((b) => b.id));
    }
    await e.worker({ concurrency: 50 });
    const side = during?.run();
    for (;;) {
      const done = await env.pool.query(
        `SELECT count(*)::int AS n FROM executions WHERE job_id = $1 AND status = 'succeeded'`,
        [rows[0].id],
      );
      if (done.rows[0].n === count) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    during?.stop();
    await side;
    const span = await env.pool.query(
      `SELECT extract(epoch FROM max(finished_at) - min(started_at)) AS s FROM executions WHERE job_id = $1`,
      [rows[0].id],
    );
    return count / Math.max(0.001, Number(span.rows[0].s));
  } finally {
    await e.stopAll();
  }
}

async function pruneWhileDraining(c: Collector, ctx: BenchContext, env: TestEnv, n: number): Promise<void> {
  const { opts, progress } = ctx;
  const count = opts['history-drain'];
  const rules = { historyMs: 20 * DAY, deadMs: 90 * DAY };
  const expected = (
    await env.pool.query(
      `SELECT count(*)::int AS n FROM executions WHERE status IN ('succeeded', 'cancelled', 'skipped') AND finished_at < now() - interval '20 days'`,
    )
  ).rows[0].n as number;
  const baseline = await drain(env, count);
  progress(`history: drain without pruning ${Math.round(baseline)} jobs/s`);
  const cursor = newRetentionCursor();
  let deleted = 0;
  let pruneMs = 0;
  let draining = true;
  const wal0 = (await env.pool.query('SELECT pg_current_wal_lsn() AS l')).rows[0].l as string;
  const deps = { store: env.store, queue: env.queue, logger: recorder().logger };
  const withPrune = await drain(env, count, {
    // As the scheduler runs it: a 1-second pass, then a 1-second pause here (9 s in production), while the drain runs.
    run: async () => {
      while (draining) {
        const t = performance.now();
        const r = await pruneOnce(deps, { rules, cursor, deadline: Date.now() + 1000 });
        pruneMs += performance.now() - t;
        deleted += r.deleted;
        if (draining) await new Promise((r2) => setTimeout(r2, 1000));
      }
    },
    stop: () => {
      draining = false;
    },
  });
  const wal = (await env.pool.query(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn) AS b`, [wal0])).rows[0].b;
  c.add('drain without pruning', 'jobs/s', Math.round(baseline), { info: true });
  c.add('drain while pruning (1 s passes)', 'jobs/s', Math.round(withPrune), { info: true });
  c.add('drain while pruning / without', 'x', Number((withPrune / baseline).toFixed(2)), { info: true });
  c.add(
    'prune rate while the drain ran (rows deleted per second of pass)',
    'rows/s',
    Math.round(deleted / Math.max(0.001, pruneMs / 1000)),
    { info: true },
  );
  c.add('rows pruned during the drain', 'rows', deleted, { info: true });
  c.add(
    'WAL written during the drain with pruning, per row pruned',
    'bytes',
    Math.round(Number(wal) / Math.max(1, deleted)),
    { info: true },
  );
  // Finish the backlog and check nothing else went: no expired row is left, every drained row is there, and the
  // rows deleted plus the rows left are the rows made (more rows expire while the scenario runs: they count too).
  let rest = 0;
  for (;;) {
    const r = await pruneOnce(deps, { rules, cursor, deadline: Date.now() + 5000 });
    rest += r.deleted;
    if (r.deleted === 0) break;
  }
  const left = (
    await env.pool.query(
      `SELECT count(*) FILTER (WHERE status IN ('succeeded', 'cancelled', 'skipped') AND finished_at < now() - interval '20 days')::int AS expired,
            count(*) FILTER (WHERE job_id IN (SELECT id FROM jobs WHERE name LIKE 'drain-%'))::int AS drained,
            count(*)::int AS total FROM executions`,
    )
  ).rows[0];
  c.check(
    'retention deleted exactly the expired rows (and none of the drained ones)',
    left.expired === 0 && left.drained === 2 * count && left.total + deleted + rest === n + 2 * count,
    JSON.stringify({ left, deleted, rest, expectedAtStart: expected, n, count }),
  );
}
