import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { engine } from '../support/engine';
import { eventually } from '../support/env';
import { apiHarness, type Harness } from '../api/harness';
import { ageFoldAndRetain, parseExposition, value } from './support';

const KEY = 'api-key-for-metrics-test';
const TOKEN = 'scraper-token-0123456789';

let h: Harness;
let e: ReturnType<typeof engine>;
beforeEach(async () => {
  h = await apiHarness({ apiKeys: [KEY], metricsToken: TOKEN });
  e = engine(h.env);
});
afterEach(async () => {
  await e.stopAll();
  await h.cleanup();
});

const scrape = async (token = TOKEN) => {
  const res = await h.call('GET', '/metrics', { headers: { Authorization: `Bearer ${token}` } });
  expect(res.status, String(res.body)).toBe(200);
  return parseExposition(res.body as string);
};
const auth = { Authorization: `Bearer ${KEY}` };

async function runJobs(input: { ok: number; dead: number; lane?: string }) {
  const lane = input.lane ?? 'short';
  const ok = (
    await h.call('POST', '/api/v1/jobs', {
      headers: auth,
      body: { name: `ok-${Math.random()}`, handler: 'noop', lane },
    })
  ).body;
  const bad = (
    await h.call('POST', '/api/v1/jobs', {
      headers: auth,
      body: { name: `bad-${Math.random()}`, handler: 'missing-handler', max_retries: 0, lane },
    })
  ).body;
  const ids: string[] = [];
  for (let i = 0; i < input.ok; i++)
    ids.push((await h.call('POST', `/api/v1/jobs/${ok.id}/trigger`, { headers: auth })).body.id);
  for (let i = 0; i < input.dead; i++)
    ids.push((await h.call('POST', `/api/v1/jobs/${bad.id}/trigger`, { headers: auth })).body.id);
  await eventually(async () => {
    const rows = await Promise.all(ids.map((id) => h.env.store.executionGet(id)));
    return rows.every((r) => r && ['succeeded', 'dead'].includes(r.status));
  });
}

describe('GET /metrics', () => {
  it('needs an API key or the metrics token', async () => {
    expect((await h.call('GET', '/metrics')).status).toBe(401);
    expect((await h.call('GET', '/metrics', { headers: { Authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await h.call('GET', '/metrics', { headers: auth })).status).toBe(200);
    const res = await h.call('GET', '/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    // The token opens /metrics only.
    expect((await h.call('GET', '/api/v1/jobs', { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(401);
  });

  it('reports the queue, live executions, finished attempts and their durations per lane', async () => {
    await e.worker();
    await runJobs({ ok: 3, dead: 2 });
    await e.stopAll();
    const waiting = (
      await h.call('POST', '/api/v1/jobs', { headers: auth, body: { name: 'waits', handler: 'noop', lane: 'long' } })
    ).body;
    await h.call('POST', `/api/v1/jobs/${waiting.id}/trigger`, { headers: auth });

    const s = await scrape();
    expect(value(s, 'jobs_attempts_finished_total', { status: 'succeeded', lane: 'short' })).toBe(3);
    expect(value(s, 'jobs_attempts_finished_total', { status: 'dead', lane: 'short' })).toBe(2);
    expect(value(s, 'jobs_attempts_finished_total', { status: 'succeeded', lane: 'long' })).toBe(0);
    expect(value(s, 'jobs_executions', { status: 'queued', lane: 'long' })).toBe(1);
    expect(value(s, 'jobs_executions', { status: 'running', lane: 'short' })).toBe(0);
    expect(value(s, 'jobs_queue_depth', { lane: 'long', state: 'ready' })).toBe(1);
    expect(value(s, 'jobs_queue_depth', { lane: 'short', state: 'dead' })).toBe(2);
    expect(value(s, 'jobs_oldest_waiting_seconds', { lane: 'long' })).toBeGreaterThanOrEqual(0);
    expect(value(s, 'jobs_attempt_duration_seconds_count', { lane: 'short' })).toBe(5);
    expect(value(s, 'jobs_attempt_duration_seconds_bucket', { lane: 'short', le: '+Inf' })).toBe(5);
    expect(value(s, 'jobs_attempt_duration_seconds_bucket', { lane: 'short', le: '3600' })).toBe(5);
    expect(value(s, 'jobs_attempt_duration_seconds_count', { lane: 'long' })).toBe(0);
    // Manual triggers are not scheduled runs: no lateness.
    expect(value(s, 'jobs_schedule_lateness_seconds_count', { lane: 'short' })).toBe(0);
    expect(value(s, 'jobs_workers', { kind: 'local' })).toBeDefined();
    // The API's own request histogram, by route pattern.
    expect(
      value(s, 'http_request_duration_seconds_count', {
        method: 'POST',
        route: '/api/v1/jobs/:id/trigger',
        status: '201',
      }),
    ).toBe(6);
    expect(s.some((x) => x.labels.route?.match(/\/jobs\/\d/))).toBe(false);
    expect(value(s, 'process_cpu_user_seconds_total', {})).toBeGreaterThan(0);
    expect(s.some((x) => x.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('counts the lateness of cron and one-off runs', async () => {
    await e.worker();
    const job = (
      await h.call('POST', '/api/v1/jobs', {
        headers: auth,
        body: { name: 'once', handler: 'noop', run_at: new Date(Date.now() + 300).toISOString() },
      })
    ).body;
    await e.tick();
    await eventually(
      async () => (await h.env.store.executionList({ jobId: job.id, limit: 5 }))[0]?.status === 'succeeded',
    );
    const s = await scrape();
    expect(value(s, 'jobs_schedule_lateness_seconds_count', { lane: 'short' })).toBe(1);
    expect(value(s, 'jobs_schedule_lateness_seconds_bucket', { lane: 'short', le: '300' })).toBe(1);
  });

  it('keeps jobs_attempts_finished_total when retention deletes the roll-ups and the executions', async () => {
    await e.worker();
    await runJobs({ ok: 4, dead: 1 });
    const before = await scrape();
    const deleted = await ageFoldAndRetain(h.env.store.pool, () => h.env.store.totalsFold());
    expect(deleted.minutesDeleted).toBeGreaterThan(0);
    expect(deleted.executionsDeleted).toBe(5);
    const after = await scrape();
    for (const status of ['succeeded', 'dead']) {
      const labels = { status, lane: 'short' };
      expect(value(after, 'jobs_attempts_finished_total', labels)).toBe(
        value(before, 'jobs_attempts_finished_total', labels),
      );
    }
    expect(value(after, 'jobs_attempt_duration_seconds_count', { lane: 'short' })).toBe(5);
    // New outcomes add to the folded totals.
    await runJobs({ ok: 2, dead: 0 });
    expect(value(await scrape(), 'jobs_attempts_finished_total', { status: 'succeeded', lane: 'short' })).toBe(6);
  });

  it('counts the minutes after the watermark whichever way it moved since the last scrape', async () => {
    await e.worker();
    await runJobs({ ok: 2, dead: 0 });
    const labels = { status: 'succeeded', lane: 'short' };
    expect(value(await scrape(), 'jobs_attempts_finished_total', labels)).toBe(2);
    // A scrape reads the roll-up from the watermark the last one saw; here it moved back past minutes not yet folded.
    const pool = h.env.store.pool;
    await pool.query(`UPDATE execution_totals_mark SET folded_through = folded_through - interval '1 hour'`);
    await pool.query(`UPDATE execution_minutes SET minute = minute - interval '30 minutes'`);
    expect(value(await scrape(), 'jobs_attempts_finished_total', labels)).toBe(2);
    await runJobs({ ok: 1, dead: 0 });
    expect(value(await scrape(), 'jobs_attempts_finished_total', labels)).toBe(3);
  });

  it('folds each closed minute once, even when passes race', async () => {
    await e.worker();
    await runJobs({ ok: 3, dead: 0 });
    const pool = h.env.store.pool;
    await pool.query(`UPDATE execution_totals_mark SET folded_through = folded_through - interval '3 hours'`);
    await pool.query(`UPDATE execution_minutes SET minute = minute - interval '2 hours'`);
    const results = await Promise.all(Array.from({ length: 6 }, () => h.env.store.totalsFold()));
    expect(results.filter((r) => r.groups > 0)).toHaveLength(1);
    const { rows } = await pool.query(`SELECT status, lane, count::int FROM execution_totals`);
    expect(rows).toEqual([{ status: 'succeeded', lane: 'short', count: 3 }]);
    // The watermark trails the clock: a second pass now has nothing to fold.
    expect((await h.env.store.totalsFold()).groups).toBe(0);
    expect(value(await scrape(), 'jobs_attempts_finished_total', { status: 'succeeded', lane: 'short' })).toBe(3);
  });
});
