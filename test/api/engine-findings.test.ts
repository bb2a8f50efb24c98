/** Regression tests for engine behaviour found while building the API. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runTick } from '@jobs/core';
import { manualClock } from '../support/env';
import { apiHarness, type Harness } from './harness';

let h: Harness;
const clock = manualClock('2025-06-01T10:00:00Z');
beforeEach(async () => {
  clock.set('2025-06-01T10:00:00Z');
  h = await apiHarness({ clock });
});
afterEach(async () => {
  await h.cleanup();
});

const queuedOf = async (jobId: string) =>
  (await h.call('GET', `/api/v1/jobs/${jobId}/executions?status=queued`)).body.data as { scheduled_for: string }[];

describe('pause then resume of a fire time already materialised', () => {
  // Pausing cancels the queued row of a materialised fire time; the unique (job_id, scheduled_for) index leaves
  // cancelled rows out, so resuming onto the same instant materialises it again instead of silently dropping it.
  it('a one-off job still runs after pause and resume', async () => {
    const job = await h.createJob({ run_at: '2025-06-01T10:00:30Z' });
    await runTick(h.deps, { lookaheadMs: 60_000 });
    expect(await queuedOf(job.id)).toHaveLength(1);
    await h.call('POST', `/api/v1/jobs/${job.id}/pause`);
    const resumed = await h.call('POST', `/api/v1/jobs/${job.id}/resume`);
    expect(resumed.body.next_run_at).toBe('2025-06-01T10:00:30.000Z');
    await runTick(h.deps, { lookaheadMs: 60_000 });
    expect(await queuedOf(job.id)).toHaveLength(1);
  });

  it('a cron job keeps its next fire time after a quick pause and resume', async () => {
    clock.set('2025-06-01T10:00:40Z');
    const job = await h.createJob({ cron_expr: '* * * * *' });
    await runTick(h.deps, { lookaheadMs: 30_000 });
    expect((await queuedOf(job.id)).map((e) => e.scheduled_for)).toEqual(['2025-06-01T10:01:00.000Z']);
    await h.call('POST', `/api/v1/jobs/${job.id}/pause`);
    clock.advance(5_000);
    await h.call('POST', `/api/v1/jobs/${job.id}/resume`);
    await runTick(h.deps, { lookaheadMs: 30_000 });
    expect((await queuedOf(job.id)).map((e) => e.scheduled_for)).toEqual(['2025-06-01T10:01:00.000Z']);
  });
});
