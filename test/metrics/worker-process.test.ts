/** `npm run worker` with METRICS_PORT serves its own per-process series. */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createJob, triggerJob } from '@jobs/core';
import { createTestEnv, eventually, type TestEnv } from '../support/env';
import { engine } from '../support/engine';
import { jobSpec } from '../support/fixtures';
import { spawnEntry, type Child } from '../support/processes';
import { parseExposition, value } from './support';

const TOKEN = 'worker-metrics-token-0123';
let env: TestEnv;
let e: ReturnType<typeof engine>;
let child: Child | null = null;

beforeEach(async () => {
  env = await createTestEnv('wmetrics');
  e = engine(env);
});
afterEach(async () => {
  if (child) {
    child.kill('SIGKILL');
    await child.exited;
    child = null;
  }
  await env.cleanup();
});

it('serves claims, attempts, flush latency and event-loop lag on METRICS_PORT', async () => {
  child = spawnEntry('functions/worker-process.ts', {
    ...env.childEnv,
    METRICS_PORT: '0',
    METRICS_TOKEN: TOKEN,
    WORKER_CONCURRENCY: '4',
  });
  const line = await child.waitFor(/worker\.metrics_listening/);
  const port = JSON.parse(line).port as number;
  const url = `http://127.0.0.1:${port}/metrics`;
  expect((await fetch(url)).status).toBe(401);
  expect(
    (await fetch(`http://127.0.0.1:${port}/other`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status,
  ).toBe(404);

  const job = await createJob(e.deps, jobSpec({ handler: 'noop' }));
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await triggerJob(e.deps, { jobId: job.id })).execution.id);
  await eventually(async () =>
    (await Promise.all(ids.map((id) => env.store.executionGet(id)))).every((r) => r?.status === 'succeeded'),
  );

  const samples = await eventually(async () => {
    const res = await fetch(url, { headers: { Authorization: `Bearer ${TOKEN}` } });
    const s = parseExposition(await res.text());
    return value(s, 'jobs_worker_attempts_total', { outcome: 'succeeded' }) === 5 ? s : null;
  });
  expect(value(samples, 'jobs_worker_claimed_total', {})).toBe(5);
  expect(value(samples, 'jobs_worker_attempts_total', { outcome: 'failed' })).toBe(0);
  expect(value(samples, 'jobs_worker_in_flight', {})).toBe(0);
  expect(value(samples, 'jobs_worker_flush_seconds_count', { result: 'ok' })).toBeGreaterThan(0);
  expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
  expect(samples.find((s) => s.name === 'jobs_worker_claimed_total')?.labels.worker_id).toMatch(/^container-/);
});
