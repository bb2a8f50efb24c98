import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiHarness, type Harness } from './harness';

let h: Harness;
beforeEach(async () => {
  h = await apiHarness();
});
afterEach(async () => {
  await h.cleanup();
});

const details = (res: { body: any }) =>
  (res.body.error.details as { path: string; message: string }[]).map((d) => `${d.path}: ${d.message}`);

describe('job limits', () => {
  it('stores every limit field and reads it back; none by default', async () => {
    const plain = await h.createJob();
    expect(plain).toMatchObject({
      max_concurrency: null,
      concurrency_key: null,
      max_concurrency_per_key: null,
      rate_limit: null,
    });
    const job = await h.createJob({
      max_concurrency: 5,
      concurrency_key: '/tenant/id',
      max_concurrency_per_key: 1,
      rate_limit: { limit: 100, period_seconds: 60 },
    });
    const expected = {
      max_concurrency: 5,
      concurrency_key: '/tenant/id',
      max_concurrency_per_key: 1,
      rate_limit: { limit: 100, period_seconds: 60, per_key: false },
    };
    expect(job).toMatchObject(expected);
    expect((await h.call('GET', `/api/v1/jobs/${job.id}`)).body).toMatchObject(expected);
    const perKey = await h.createJob({
      concurrency_key: '',
      rate_limit: { limit: 3, period_seconds: 2, per_key: true },
    });
    expect(perKey).toMatchObject({
      concurrency_key: '',
      max_concurrency_per_key: null,
      rate_limit: { limit: 3, period_seconds: 2, per_key: true },
    });
  });

  it.each([
    [{ max_concurrency: 0 }, 'max_concurrency: Too small'],
    [{ max_concurrency: 10_001 }, 'max_concurrency: Too big'],
    [{ max_concurrency: 1.5 }, 'max_concurrency: Invalid input: expected int'],
    [{ max_concurrency: '2' }, 'max_concurrency: Invalid input: expected number'],
    [{ max_concurrency_per_key: 2 }, 'max_concurrency_per_key: needs concurrency_key'],
    [{ concurrency_key: '/tenant' }, 'concurrency_key: needs max_concurrency_per_key'],
    [
      { concurrency_key: 'tenant', max_concurrency_per_key: 1 },
      'concurrency_key: a JSON Pointer is empty or starts with "/"',
    ],
    [{ concurrency_key: '/a~2', max_concurrency_per_key: 1 }, 'concurrency_key: "~" must be followed by 0 or 1'],
    [{ concurrency_key: `/${'x'.repeat(200)}`, max_concurrency_per_key: 1 }, 'concurrency_key: Too big'],
    [{ rate_limit: { limit: 3 } }, 'rate_limit.period_seconds: is required'],
    [{ rate_limit: { limit: 0, period_seconds: 1 } }, 'rate_limit.limit: Too small'],
    [{ rate_limit: { limit: 1, period_seconds: 86_401 } }, 'rate_limit.period_seconds: Too big'],
    [{ rate_limit: { limit: 1, period_seconds: 1, burst: 2 } }, 'rate_limit.burst: unknown field'],
    [{ rate_limit: { limit: 1, period_seconds: 1, per_key: true } }, 'rate_limit.per_key: needs concurrency_key'],
    [{ rate_limit: 5 }, 'rate_limit: Invalid input: expected object'],
  ])('refuses %j with a 400 that says why', async (fields, message) => {
    const res = await h.call('POST', '/api/v1/jobs', { body: { name: 'limited', command: 'true', ...fields } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(details(res).some((d) => d.startsWith(message))).toBe(true);
  });

  it('shows how many attempts wait for a slot, and why, per job and in the stats', async () => {
    const job = await h.createJob({
      handler: 'noop',
      command: null,
      max_concurrency: 1,
      concurrency_key: '/t',
      max_concurrency_per_key: 1,
    });
    for (const t of ['a', 'a', 'a', 'b'])
      await h.call('POST', `/api/v1/jobs/${job.id}/trigger`, { body: { payload: { t } } });
    // Two claims as workers would make them: the first starts a and b, the second finds the a's over their key's limit.
    await h.env.queue.claim({ lane: 'short', count: 10, leaseMs: 60_000 });
    const limits = await h.call('GET', `/api/v1/jobs/${job.id}/limits`);
    expect(limits.status).toBe(200);
    expect(limits.body).toMatchObject({
      job_id: job.id,
      name: job.name,
      max_concurrency: 1,
      running: 1,
      waiting: { total: 3 },
      rate: null,
    });
    const w = limits.body.waiting;
    expect(w.max_concurrency + w.max_concurrency_per_key).toBe(3);
    const stats = await h.call('GET', '/api/v1/stats');
    expect(stats.body.limits).toEqual([{ job_id: job.id, name: job.name, running: 1, waiting: w }]);
    expect((await h.call('GET', '/api/v1/jobs/999999/limits')).status).toBe(404);
  });
});

describe('lanes', () => {
  it('lists the lanes, pauses and resumes one (idempotently), and 404s an unknown lane', async () => {
    const list = await h.call('GET', '/api/v1/lanes');
    expect(list.status).toBe(200);
    expect(list.body.data.map((l: any) => [l.lane, l.paused])).toEqual([
      ['short', false],
      ['long', false],
    ]);
    expect(list.body.data[0]).toMatchObject({
      paused_at: null,
      executions: { queued: 0, retrying: 0, running: 0 },
      queue: { ready: 0, delayed: 0, running: 0, dead: 0 },
    });

    const job = await h.createJob({ handler: 'noop', command: null });
    const paused = await h.call('POST', '/api/v1/lanes/short/pause');
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ lane: 'short', paused: true, paused_at: expect.any(String) });
    expect((await h.call('POST', '/api/v1/lanes/short/pause')).body.paused_at).toBe(paused.body.paused_at);
    // Triggers are accepted while paused; nothing is claimed.
    expect((await h.call('POST', `/api/v1/jobs/${job.id}/trigger`)).status).toBe(201);
    expect(await h.env.queue.claim({ lane: 'short', count: 10, leaseMs: 1000 })).toMatchObject({
      claims: [],
      state: 'paused',
    });
    const after = await h.call('GET', '/api/v1/lanes');
    expect(after.body.data[0]).toMatchObject({
      lane: 'short',
      paused: true,
      executions: { queued: 1 },
      queue: { ready: 1 },
    });
    expect(after.body.data[1]).toMatchObject({ lane: 'long', paused: false });

    const resumed = await h.call('POST', '/api/v1/lanes/short/resume');
    expect(resumed.body).toMatchObject({ lane: 'short', paused: false, paused_at: null });
    expect((await h.env.queue.claim({ lane: 'short', count: 10, leaseMs: 1000 })).claims).toHaveLength(1);

    const unknown = await h.call('POST', '/api/v1/lanes/medium/pause');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    expect((await h.call('GET', '/api/v1/lanes/short/pause')).status).toBe(405);
  });
});
