/**
 * A real Prometheus server scrapes the API's /metrics (served over HTTP, with the metrics token) while a known
 * workload runs: the series exist with the right labels and values, and the finished-attempts counter does not drop
 * (no counter reset) when retention deletes the roll-ups and the executions.
 */
import { serve } from '@hono/node-server';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, type Harness } from '../api/harness';
import { engine } from '../support/engine';
import { eventually } from '../support/env';
import { ROOT } from '../support/processes';
import { PROMETHEUS, startPrometheus, type PrometheusServer } from './prometheus';
import { ageFoldAndRetain } from './support';

const KEY = 'api-key-for-prometheus-test';
const TOKEN = 'prometheus-scrape-token-01234';
const auth = { Authorization: `Bearer ${KEY}` };

let h: Harness;
let e: ReturnType<typeof engine>;
let server: ReturnType<typeof serve>;
let prom: PrometheusServer;

beforeAll(async () => {
  h = await apiHarness({ apiKeys: [KEY], metricsToken: TOKEN });
  e = engine(h.env);
  server = serve({ fetch: h.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as AddressInfo;
  if (PROMETHEUS)
    prom = await startPrometheus({
      target: `127.0.0.1:${port}`,
      token: TOKEN,
      rules: `${ROOT}docs/prometheus/alerts.yml`,
    });
});
afterAll(async () => {
  await prom?.stop();
  await e.stopAll();
  await new Promise((r) => server.close(r));
  await h.cleanup();
});

/** Waits until Prometheus's latest sample of `expr` is `expected` (a scrape happens every 500 ms). */
async function settles(expr: string, expected: number) {
  let last: unknown;
  await eventually(
    async () => {
      const result = await prom.query(expr);
      last = result;
      return result.length === 1 && result[0]!.value === expected;
    },
    20_000,
    200,
  ).catch(() => {
    throw new Error(
      `${expr}: expected ${expected}, Prometheus has ${JSON.stringify(last)}\n${prom.log().slice(-1500)}`,
    );
  });
}

async function run(input: { ok: number; dead: number }) {
  const ok = (
    await h.call('POST', '/api/v1/jobs', { headers: auth, body: { name: `ok-${Math.random()}`, handler: 'noop' } })
  ).body;
  const bad = (
    await h.call('POST', '/api/v1/jobs', {
      headers: auth,
      body: { name: `bad-${Math.random()}`, handler: 'no-such-handler', max_retries: 0 },
    })
  ).body;
  const ids: string[] = [];
  for (let i = 0; i < input.ok; i++)
    ids.push((await h.call('POST', `/api/v1/jobs/${ok.id}/trigger`, { headers: auth })).body.id);
  for (let i = 0; i < input.dead; i++)
    ids.push((await h.call('POST', `/api/v1/jobs/${bad.id}/trigger`, { headers: auth })).body.id);
  await eventually(async () =>
    (await Promise.all(ids.map((id) => h.env.store.executionGet(id)))).every(
      (r) => r && ['succeeded', 'dead'].includes(r.status),
    ),
  );
}

describe.skipIf(!PROMETHEUS)('Prometheus scraping /metrics', () => {
  it('sees the workload, and the counter survives a retention pass', async () => {
    await settles('up{job="jobs-scheduler"}', 1);
    await e.worker({ concurrency: 4 });
    const N = 12;
    const M = 3;
    await run({ ok: N, dead: M });

    await settles('jobs_attempts_finished_total{status="succeeded",lane="short"}', N);
    await settles('jobs_attempts_finished_total{status="dead",lane="short"}', M);
    await settles('jobs_queue_depth{lane="short",state="dead"}', M);
    await settles('jobs_queue_depth{lane="short",state="ready"}', 0);
    await settles('jobs_executions{status="queued",lane="short"}', 0);
    await settles('jobs_oldest_waiting_seconds{lane="short"}', 0);
    await settles('jobs_attempt_duration_seconds_count{lane="short"}', N + M);
    await settles('jobs_workers{kind="local"}', 1);
    await settles('jobs_worker_slots{kind="local",state="free"}', 4);
    await settles(
      'sum(http_request_duration_seconds_count{route="/api/v1/jobs/:id/trigger",method="POST",status="201"})',
      N + M,
    );
    // Every label combination is there from the start, zeros included.
    expect(
      (await prom.query('jobs_attempts_finished_total')).map((r) => `${r.metric.status}/${r.metric.lane}`).sort(),
    ).toEqual(
      ['cancelled', 'dead', 'failed', 'skipped', 'succeeded'].flatMap((s) => [`${s}/long`, `${s}/short`]).sort(),
    );
    expect((await prom.query('count(jobs_queue_depth)'))[0]!.value).toBe(8);
    const quantile = await prom.query(
      'histogram_quantile(0.95, sum by (le) (jobs_attempt_duration_seconds_bucket{lane="short"}))',
    );
    expect(quantile[0]!.value).toBeGreaterThan(0);
    expect(quantile[0]!.value).toBeLessThanOrEqual(1);

    // Retention: the roll-ups age past the watermark, are folded, deleted with the executions.
    const deleted = await ageFoldAndRetain(h.env.store.pool, () => h.env.store.totalsFold());
    expect(deleted.executionsDeleted).toBe(N + M);
    const countBefore = (
      await prom.query('count_over_time(jobs_attempts_finished_total{status="succeeded",lane="short"}[1m])')
    )[0]!.value;
    // Several scrapes after the deletion, then more work.
    await eventually(
      async () =>
        (await prom.query('count_over_time(jobs_attempts_finished_total{status="succeeded",lane="short"}[1m])'))[0]!
          .value >=
        countBefore + 3,
      20_000,
      200,
    );
    await settles('jobs_attempts_finished_total{status="succeeded",lane="short"}', N);
    await run({ ok: 2, dead: 0 });
    await settles('jobs_attempts_finished_total{status="succeeded",lane="short"}', N + 2);
    // Prometheus saw no counter reset at any scrape, and the histogram did not drop either.
    await settles('resets(jobs_attempts_finished_total{status="succeeded",lane="short"}[5m])', 0);
    await settles('resets(jobs_attempts_finished_total{status="dead",lane="short"}[5m])', 0);
    await settles('resets(jobs_attempt_duration_seconds_count{lane="short"}[5m])', 0);
    await settles('jobs_attempt_duration_seconds_count{lane="short"}', N + M + 2);

    // The README's alert rules load and evaluate; the dead-executions one sees the M dead attempts.
    const rules = (await prom.api('rules')).groups.flatMap((g: { rules: unknown[] }) => g.rules) as {
      name: string;
      health: string;
      lastError?: string;
    }[];
    expect(rules.map((r) => r.name).sort()).toEqual([
      'JobsApiErrors',
      'JobsDeadExecutions',
      'JobsFailureRatioHigh',
      'JobsMetricsDown',
      'JobsOldestWaiting',
      'JobsQueueWithoutWorkers',
    ]);
    await eventually(
      async () => {
        const again = (await prom.api('rules')).groups.flatMap((g: { rules: unknown[] }) => g.rules) as {
          health: string;
        }[];
        return again.every((r) => r.health === 'ok');
      },
      10_000,
      200,
    );
    const alerts = (await prom.api('alerts')).alerts as {
      labels: { alertname: string; lane?: string };
      state: string;
    }[];
    expect(
      alerts.filter((a) => a.labels.alertname === 'JobsDeadExecutions').map((a) => [a.labels.lane, a.state]),
    ).toEqual([['short', 'firing']]);
    expect(alerts.some((a) => a.labels.alertname === 'JobsMetricsDown')).toBe(false);

    // Every query of the Grafana dashboard is valid PromQL over series that exist, and the main panels show data.
    const dashboard = JSON.parse(readFileSync(`${ROOT}docs/grafana/jobs-scheduler.json`, 'utf8'));
    const exprs = (dashboard.panels as { title: string; targets: { expr: string }[] }[]).flatMap((p) =>
      p.targets.map((t) => ({ title: p.title, expr: t.expr })),
    );
    expect(exprs.length).toBeGreaterThan(10);
    for (const { title, expr } of exprs) {
      const result = await prom.query(expr.replaceAll('$__rate_interval', '1m').replaceAll('$lane', '.*'));
      expect(result.length, `${title}: ${expr}`).toBeGreaterThan(0);
    }
  }, 120_000);
});
