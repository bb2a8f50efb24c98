/**
 * metrics: GET /metrics over a long history. `metrics-executions` finished executions (default 5,000,000) spread
 * over 30 days are inserted by SQL, with their per-minute roll-ups computed from them (as the recording statements
 * would have counted them) and folded into the monotonic totals the way the scheduler's passes fold them, plus
 * `metrics-live` live rows (queued, running). Then `metrics-scrapes` scrapes over HTTP (loopback, the real app and
 * auth); target p95 < 50 ms. Checks: the counters equal the history's finished rows, and the scrape's statements
 * never scan the executions table.
 */
import { serve } from '@hono/node-server';
import { createApp } from '@jobs/api';
import { systemClock } from '@jobs/core';
import type { AddressInfo } from 'node:net';
import { recorder } from '../../support/env';
import { benchEnv } from '../lib/envs';
import type { Collector } from '../lib/result';
import { percentiles } from '../lib/stats';
import type { BenchContext } from '../run';

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
    const http = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => http.once('listening', r));
    server.close = () => new Promise((r) => http.close(() => r()));
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/metrics`;
    const scrape = async () => {
      const res = await fetch(url, { headers: { Authorization: `Bearer ${KEY}` } });
      if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
      return res.text();
    };
    await scrape(); // a warm connection and prepared plans, as a scraped API has

    for (let run = 0; run < runs; run++) {
      const times: number[] = [];
      for (let i = 0; i < opts['metrics-scrapes']; i++) {
        t = performance.now();
        await scrape();
        times.push(performance.now() - t);
      }
      const p = percentiles(times);
      c.add(`GET /metrics with ${n.toLocaleString('en-US')} executions: p95`, 'ms', p.p95!, { target: { op: '<', value: 50 } });
      c.add('GET /metrics: p50', 'ms', p.p50!, { info: true });
      progress(`metrics run ${run + 1}: p50 ${p.p50!.toFixed(1)} ms, p95 ${p.p95!.toFixed(1)} ms over ${times.length} scrapes`);
    }

    const text = await scrape();
    const total = [...text.matchAll(/^jobs_attempts_finished_total\{[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    const queued = Number(/^jobs_executions\{status="queued",lane="short"\} (\d+)$/m.exec(text)?.[1]);
    const live = opts['metrics-live'];
    c.check('the counters equal the finished history; live rows counted', total === n && queued === live - Math.floor(live / 10), JSON.stringify({ total, n, queued }));
    const plans = await Promise.all([
      env.pool.query(
        `EXPLAIN (FORMAT JSON) SELECT status, lane, count(*)::int FROM executions WHERE status IN ('queued', 'retrying', 'running') GROUP BY status, lane`,
      ),
      env.pool.query(
        `EXPLAIN (FORMAT JSON) SELECT status, lane, count FROM execution_minutes WHERE minute > $1 AND lane <> ''`,
        [(await env.pool.query('SELECT folded_through FROM execution_totals_mark')).rows[0].folded_through],
      ),
    ]);
    const scans = plans.flatMap((p) => seqScans((p.rows[0] as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0]!.Plan));
    const planText = plans.map((p) => JSON.stringify(p.rows[0])).join(' ');
    c.check('no sequential scan of executions or of the roll-ups (live rows through executions_live)', scans.length === 0 && planText.includes('executions_live'), `${scans.join(', ')} ${planText.slice(0, 400)}`);
    c.note('history by SQL: finished attempts over 30 days, roll-ups computed from them and folded; scrapes one at a time over loopback HTTP with an API key');
  } finally {
    await server.close();
    await env.cleanup();
  }
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/** The relations a plan reads with a sequential scan. */
function seqScans(node: PlanNode): string[] {
  const own = node['Node Type'] === 'Seq Scan' && node['Relation Name'] ? [node['Relation Name']] : [];
  return [...own, ...(node.Plans ?? []).flatMap(seqScans)].filter((r) => r === 'executions' || r === 'execution_minutes');
}
