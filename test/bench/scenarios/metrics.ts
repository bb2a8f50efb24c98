/**
 * metrics: GET /metrics over a long history. `metrics-executions` finished executions (default 5,000,000) spread
 * over 30 days are inserted by SQL, with their per-minute roll-ups computed from them (as the recording statements
 * would have counted them) and folded into the monotonic totals the way the scheduler's passes fold them, plus
 * `metrics-live` live rows (queued, running). Then `metrics-scrapes` scrapes over HTTP (loopback, the real app and
 * auth) while one worker process drains no-op jobs as the drain scenario's does (`metrics-drain` queued and
 * drained, again and again; only scrapes during a drain count; 0: scrape an idle system); target p95 < 50 ms. Then
 * the scrape's parts alone (PostgreSQL, Redis, rendering), and the shared buffers of its statement (EXPLAIN
 * (ANALYZE, BUFFERS): deterministic where timings on a shared machine are not). Checks: the counters equal the
 * finished history plus what the worker finished, and the scrape's statement never scans executions.
 */
import { serve } from '@hono/node-server';
import { createApp } from '@jobs/api';
import { systemClock } from '@jobs/core';
import { METRICS_SQL } from '@jobs/store';
import type { AddressInfo } from 'node:net';
import { createProcessMetrics } from '../../../packages/api/src/metrics/http';
import { systemSeries } from '../../../packages/api/src/metrics/series';
import { recorder, type TestEnv } from '../../support/env';
import { benchEnv } from '../lib/envs';
import { enqueueBulk, noopJob, spawnWorker, waitRegistered } from '../lib/ours';
import type { Collector } from '../lib/result';
import { percentiles } from '../lib/stats';
import type { BenchContext } from '../lib/options';

const KEY = 'bench-metrics-key';
const CHUNK = 500_000;

export async function metricsScenario(c: Collector, ctx: BenchContext, runs: number): Promise<void> {
  const { opts, progress } = ctx;
  const env = await benchEnv('bench_metrics');
  const server = { close: async () => undefined } as { close(): Promise<void> };
  try {
    const n = opts['metrics-executions'];
    let t = performance.now();
    await env.pool.query(`INSERT INTO jobs (name, handler) SELECT 'job-' || g, 'noop' FROM generate_series(1, 100) g`);
    // History: 30 days of finished attempts, oldest first (ids grow with time, as they do).
    for (let from = 1; from <= n; from += CHUNK) {
      const to = Math.min(n, from + CHUNK - 1);
      await env.pool.query(
        `INSERT INTO executions (job_id, trigger, status, lane, scheduled_for, queued_at, started_at, finished_at, duration_ms)
         SELECT 1 + g % 100, CASE WHEN g % 3 = 0 THEN 'cron' ELSE 'manual' END,
                CASE WHEN g % 50 = 0 THEN 'dead' WHEN g % 10 = 0 THEN 'failed' ELSE 'succeeded' END,
                CASE WHEN g % 4 = 0 THEN 'long' ELSE 'short' END,
                t, t, t + interval '20 ms', t + interval '20 ms' + (g % 997) * interval '1 ms', 20 + g % 997
         FROM generate_series($1::int, $2::int) g,
              LATERAL (SELECT now() - interval '30 days' + (g::double precision / $3) * interval '30 days' - interval '5 minutes' AS t) x`,
        [from, to, n],
      );
      progress(`metrics: ${to.toLocaleString('en-US')} executions inserted`);
    }
    // The roll-ups the recording statements would have written, then folded as the passes do (a day per pass).
    await env.pool.query(
      `INSERT INTO execution_minutes (minute, status, lane, count, duration_ms, duration_le, lateness_ms, lateness_le)
       SELECT date_trunc('minute', finished_at), status, lane, count(*), sum(duration_ms),
              ARRAY[count(*) FILTER (WHERE duration_ms <= 5), count(*) FILTER (WHERE duration_ms <= 10), count(*) FILTER (WHERE duration_ms <= 25),
                    count(*) FILTER (WHERE duration_ms <= 50), count(*) FILTER (WHERE duration_ms <= 100), count(*) FILTER (WHERE duration_ms <= 250),
                    count(*) FILTER (WHERE duration_ms <= 500), count(*) FILTER (WHERE duration_ms <= 1000), count(*), count(*), count(*), count(*),
                    count(*), count(*), count(*), count(*), count(*)]::bigint[],
              0, NULL
       FROM executions GROUP BY 1, 2, 3`,
    );
    await env.pool.query(`UPDATE execution_totals_mark SET folded_through = now() - interval '31 days'`);
    let passes = 0;
    while ((await env.store.totalsFold()).foldedThrough !== null) passes++;
    // Live rows: a backlog waiting, some running.
    await env.pool.query(
      `INSERT INTO executions (job_id, trigger, status, lane, scheduled_for, worker_id, lease_token, started_at, lease_expires_at)
       SELECT 1 + g % 100, 'manual', CASE WHEN g % 10 = 0 THEN 'running' ELSE 'queued' END, 'short', now() - interval '1 minute',
              CASE WHEN g % 10 = 0 THEN 'w' END, CASE WHEN g % 10 = 0 THEN 't' || g END,
              CASE WHEN g % 10 = 0 THEN now() END, CASE WHEN g % 10 = 0 THEN now() + interval '1 hour' END
       FROM generate_series(1, $1::int) g`,
      [opts['metrics-live']],
    );
    await env.pool.query('ANALYZE');
    c.add('history built (executions, roll-ups, fold, ANALYZE)', 's', (performance.now() - t) / 1000, { info: true });
    c.add('fold passes to catch up 31 days', 'passes', passes, { info: true });

    const rec = recorder();
    const app = createApp({
      store: env.store,
      queue: env.queue,
      clock: systemClock,
      sink: rec.sink,
      logger: rec.logger,
      apiKeys: [KEY],
      bodyLimitBytes: 256 * 1024,
      shortLaneMaxTimeoutMs: 600_000,
      workerActiveWithinMs: 60_000,
    });
    // The server's own time for each scrape (the handler, body rendered), apart from the client's and the socket's.
    const served: number[] = [];
    const timedFetch = async (req: Request) => {
      const started = performance.now();
      const res = await app.fetch(req);
      served.push(performance.now() - started);
      return res;
    };
    const http = serve({ fetch: timedFetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => http.once('listening', r));
    server.close = () => new Promise((r) => http.close(() => r()));
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/metrics`;
    const scrape = async () => {
      const res = await fetch(url, { headers: { Authorization: `Bearer ${KEY}` } });
      if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
      return res.text();
    };
    await scrape(); // a warm connection and prepared plans, as a scraped API has

    const drainN = opts['metrics-drain'];
    const drain = drainN > 0 ? await startDrain(env, drainN, opts.concurrency) : null;
    try {
      for (let run = 0; run < runs; run++) {
        const times: number[] = [];
        served.length = 0;
        let drained = 0;
        let drainingMs = 0;
        while (times.length < opts['metrics-scrapes']) {
          // Scrapes count only while the worker drains; between drains it gets the next batch (not timed).
          if (drain && !(await drain.draining())) await drain.refill();
          const before = drain ? await drain.finished() : 0;
          const started = performance.now();
          do {
            t = performance.now();
            await scrape();
            times.push(performance.now() - t);
          } while (times.length < opts['metrics-scrapes'] && (!drain || (await drain.draining())));
          drainingMs += performance.now() - started;
          if (drain) drained += (await drain.finished()) - before;
        }
        const p = percentiles(times);
        const label = `GET /metrics with ${n.toLocaleString('en-US')} executions${drain ? ', a worker draining' : ''}`;
        c.add(`${label}: p95`, 'ms', p.p95!, { target: { op: '<', value: 50 } });
        c.add('GET /metrics: p50', 'ms', p.p50!, { info: true });
        const own = percentiles(served.slice(-times.length));
        c.add("GET /metrics, the server's part (app.fetch): p50", 'ms', own.p50!, { info: true });
        c.add("GET /metrics, the server's part (app.fetch): p95", 'ms', own.p95!, { info: true });
        const rate = drained / (drainingMs / 1000);
        if (drain) c.add('drain beside the scrapes', 'jobs/s', rate, { info: true });
        progress(
          `metrics run ${run + 1}: p50 ${p.p50!.toFixed(1)} ms, p95 ${p.p95!.toFixed(1)} ms over ${times.length} scrapes${drain ? `, ${Math.round(rate)} jobs/s drained meanwhile` : ''}`,
        );
      }
      // The parts alone and the plan, during a drain too.
      if (drain && !(await drain.draining())) await drain.refill();
      await scrapeParts(c, env);
      await statementBuffers(c, env);
    } finally {
      await drain?.stop();
    }

    // Quiet now: every finished attempt, the history's and the worker's, is in the counters.
    const { rows: expected } = await env.pool.query(
      `SELECT (SELECT count(*)::int FROM executions WHERE job_id = $1 AND status IN ('succeeded', 'failed', 'dead')) AS drained,
              (SELECT count(*)::int FROM executions WHERE status = 'queued' AND lane = 'short') AS queued`,
      [drain?.jobId ?? '0'],
    );
    const text = await scrape();
    const total = [...text.matchAll(/^jobs_attempts_finished_total\{[^}]*\} (\d+)$/gm)].reduce(
      (sum, m) => sum + Number(m[1]),
      0,
    );
    const queued = Number(/^jobs_executions\{status="queued",lane="short"\} (\d+)$/m.exec(text)?.[1]);
    const want = { total: n + expected[0].drained, queued: expected[0].queued };
    c.check(
      'the counters equal the finished history and the drain; live rows counted',
      total === want.total && queued === want.queued,
      JSON.stringify({ total, queued, want }),
    );
    const { rows: plan } = await env.pool.query(`EXPLAIN (FORMAT JSON) ${METRICS_SQL}`, [
      await env.store.totalsFoldedThrough(),
    ]);
    const scans = seqScans((plan[0] as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0]!.Plan);
    const planText = JSON.stringify(plan[0]);
    c.check(
      'no sequential scan of executions or of the roll-ups (live rows through executions_live)',
      scans.length === 0 && planText.includes('executions_live'),
      `${scans.join(', ')} ${planText.slice(0, 400)}`,
    );
    c.note(
      'history by SQL: finished attempts over 30 days, roll-ups computed from them and folded; scrapes one at a time over loopback HTTP with an API key',
    );
    if (drain)
      c.note(
        `scraped while one worker process (C=${opts.concurrency}) drained ${drainN.toLocaleString('en-US')} queued no-op jobs, queued again each time it ran dry (scrapes between drains not counted)`,
      );
  } finally {
    await server.close();
    await env.cleanup();
  }
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

/** The relations a plan reads with a sequential scan. */
function seqScans(node: PlanNode): string[] {
  const own = node['Node Type'] === 'Seq Scan' && node['Relation Name'] ? [node['Relation Name']] : [];
  return [...own, ...(node.Plans ?? []).flatMap(seqScans)].filter(
    (r) => r === 'executions' || r === 'execution_minutes',
  );
}

/**
 * One worker process draining no-op jobs as the drain scenario's does: `n` queued, drained to none, queued again
 * (`refill`) for as long as the scrapes go on.
 */
async function startDrain(env: TestEnv, n: number, concurrency: number) {
  const jobId = await noopJob(env);
  const worker = spawnWorker(env, { concurrency, logLevel: 'warn' });
  await waitRegistered(env, worker);
  return {
    jobId,
    refill: () => enqueueBulk(env, jobId, n, 5000),
    /** Whether the worker still has jobs of the drain to claim or finish (Redis: ready and leased ids). */
    draining: async () => {
      const d = (await env.queue.depth()).short;
      return (d?.ready ?? 0) + (d?.running ?? 0) > 0;
    },
    /** Attempts the worker finished so far (its no-op job's rows, through executions_job). */
    finished: async () =>
      (
        await env.pool.query(`SELECT count(*)::int AS n FROM executions WHERE job_id = $1 AND status = 'succeeded'`, [
          jobId,
        ])
      ).rows[0].n as number,
    stop: () => worker.stop(),
  };
}

/** Each part of a scrape alone, `SAMPLES` times in turn: where a scrape's time goes. */
async function scrapeParts(c: Collector, env: TestEnv): Promise<void> {
  const SAMPLES = 50;
  const own = createProcessMetrics();
  const parts: Record<string, number[]> = {
    'PostgreSQL (live rows, totals)': [],
    'PostgreSQL (workers)': [],
    'Redis (depth)': [],
    'rendering (prom-client)': [],
  };
  const time = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const out = await f();
    parts[name]!.push(performance.now() - t);
    return out;
  };
  for (let i = 0; i < SAMPLES; i++) {
    const snapshot = await time('PostgreSQL (live rows, totals)', () => env.store.metricsSnapshot());
    const workers = await time('PostgreSQL (workers)', () => env.store.workerListActive(60_000));
    const depth = await time('Redis (depth)', () => env.queue.depth());
    await time(
      'rendering (prom-client)',
      async () => `${await own.registry.metrics()}\n${await systemSeries({ snapshot, depth, workers }).metrics()}`,
    );
  }
  for (const [name, values] of Object.entries(parts))
    c.add(`scrape part alone, p50: ${name}`, 'ms', percentiles(values).p50!, { info: true });
}

/** Shared buffers (hit + read) and time of the scrape's statement, from EXPLAIN (ANALYZE, BUFFERS), and per node. */
async function statementBuffers(c: Collector, env: TestEnv): Promise<void> {
  const { rows } = await env.pool.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${METRICS_SQL}`, [
    await env.store.totalsFoldedThrough(),
  ]);
  const plan = (rows[0] as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0]!.Plan;
  c.add('scrape statement: shared buffers', 'blocks', plan['Shared Hit Blocks']! + plan['Shared Read Blocks']!, {
    info: true,
  });
  // The scans under it: which relation, how many rows, how many buffers.
  const scans: string[] = [];
  const walk = (node: PlanNode) => {
    if (node['Relation Name'])
      scans.push(
        `${node['Node Type']} ${node['Relation Name']}${node['Index Name'] ? ` (${node['Index Name']})` : ''}: ${node['Actual Rows']} rows, ${node['Shared Hit Blocks']! + node['Shared Read Blocks']!} buffers`,
      );
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan);
  c.note(`scrape statement (EXPLAIN ANALYZE, BUFFERS): ${scans.join('; ')}`);
}
