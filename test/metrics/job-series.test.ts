/**
 * The per-job series of GET /metrics: off unless METRICS_JOBS chooses jobs, then the last success and last failure of
 * each chosen job (as the history has them), at most METRICS_JOBS_MAX jobs, oldest first, with the count left out.
 */
import { createApp, type ApiDeps } from '@jobs/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine } from '../support/engine';
import { eventually } from '../support/env';
import { apiHarness, type Harness } from '../api/harness';
import { parseExposition, value, type Sample } from './support';

const KEY = 'api-key-for-job-series-test';
const auth = { Authorization: `Bearer ${KEY}` };

let h: Harness;
let e: ReturnType<typeof engine>;
/** Jobs in the order they were created: nightly-report (succeeds, then fails), flaky (fails), idle (never runs). */
let jobs: { nightly: string; flaky: string; idle: string };

async function run(jobId: string): Promise<string> {
  const id = (await h.call('POST', `/api/v1/jobs/${jobId}/trigger`, { headers: auth })).body.id as string;
  await eventually(async () => ['succeeded', 'dead'].includes((await h.env.store.executionGet(id))?.status ?? ''));
  return id;
}

const finishedAt = async (executionId: string) =>
  (await h.env.store.executionGet(executionId))!.finishedAt!.getTime() / 1000;

/** Scrapes an app built on the harness's deps with `metricsJobs`. */
async function scrape(metricsJobs: ApiDeps['metricsJobs']): Promise<Sample[]> {
  const app = createApp({ ...h.deps, metricsJobs });
  const res = await app.request('/metrics', { headers: auth });
  expect(res.status).toBe(200);
  return parseExposition(await res.text());
}

const perJob = (s: Sample[]) => s.filter((x) => x.name.startsWith('jobs_job_'));

beforeAll(async () => {
  h = await apiHarness({ apiKeys: [KEY] });
  e = engine(h.env);
  const create = async (body: object) => (await h.call('POST', '/api/v1/jobs', { headers: auth, body })).body.id;
  jobs = {
    nightly: await create({ name: 'nightly-report', handler: 'noop' }),
    flaky: await create({ name: 'flaky', handler: 'missing-handler', max_retries: 0 }),
    idle: await create({ name: 'idle', handler: 'noop' }),
  };
});
afterAll(async () => {
  await e.stopAll();
  await h.cleanup();
});

describe('per-job series on GET /metrics', () => {
  it('reports none unless METRICS_JOBS asks', async () => {
    expect(perJob(await scrape(null))).toEqual([]);
    expect(perJob(await scrape(undefined))).toEqual([]);
  });

  it('reports when each chosen job last succeeded and last failed, from its history', async () => {
    await e.worker();
    const ok = await run(jobs.nightly);
    const failed = await run(jobs.flaky);
    const s = await scrape({ names: null, max: 100 });
    const nightly = { job_id: jobs.nightly, job_name: 'nightly-report' };
    const flaky = { job_id: jobs.flaky, job_name: 'flaky' };
    expect(value(s, 'jobs_job_last_success_timestamp_seconds', nightly)).toBe(await finishedAt(ok));
    expect(value(s, 'jobs_job_last_success_timestamp_seconds', flaky)).toBeUndefined();
    expect(value(s, 'jobs_job_last_failure_timestamp_seconds', flaky)).toBe(await finishedAt(failed));
    expect(value(s, 'jobs_job_last_failure_timestamp_seconds', nightly)).toBeUndefined();
    // A job with no outcome yet has no sample of either series.
    expect(s.some((x) => x.labels.job_name === 'idle')).toBe(false);
    expect(value(s, 'jobs_job_series_omitted', {})).toBe(0);

    // A newer failure of nightly-report shows beside its last success, which stays.
    await h.call('PATCH', `/api/v1/jobs/${jobs.nightly}`, {
      headers: auth,
      body: { handler: 'missing-handler', max_retries: 0 },
    });
    const laterFailure = await run(jobs.nightly);
    const again = await scrape({ names: null, max: 100 });
    expect(value(again, 'jobs_job_last_failure_timestamp_seconds', nightly)).toBe(await finishedAt(laterFailure));
    expect(value(again, 'jobs_job_last_success_timestamp_seconds', nightly)).toBe(await finishedAt(ok));
  });

  it('keeps to the jobs named, and to METRICS_JOBS_MAX oldest first, counting the ones left out', async () => {
    const named = perJob(await scrape({ names: ['flaky', 'no-such-job'], max: 100 }));
    expect(new Set(named.filter((x) => x.labels.job_name).map((x) => x.labels.job_name))).toEqual(new Set(['flaky']));
    expect(value(named, 'jobs_job_series_omitted', {})).toBe(0);

    const capped = perJob(await scrape({ names: null, max: 1 }));
    expect(new Set(capped.filter((x) => x.labels.job_id).map((x) => x.labels.job_id))).toEqual(new Set([jobs.nightly]));
    expect(value(capped, 'jobs_job_series_omitted', {})).toBe(2);

    // A deleted job leaves the series and the count.
    expect((await h.call('DELETE', `/api/v1/jobs/${jobs.idle}`, { headers: auth })).status).toBe(204);
    expect(value(perJob(await scrape({ names: null, max: 1 })), 'jobs_job_series_omitted', {})).toBe(1);
  });
});
