import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nextFireTime, parseCron } from '@jobs/core';
import { manualClock } from '../support/env';
import { apiHarness, type Harness } from './harness';

let h: Harness;
beforeEach(async () => {
  h = await apiHarness();
});
afterEach(async () => {
  await h.cleanup();
});

const errorOf = (res: { body: any }) =>
  res.body.error as { code: string; message: string; details?: { path: string; message: string }[] };

describe('POST /api/v1/jobs', () => {
  it('creates a job from the README example, with every default', async () => {
    const before = new Date();
    const res = await h.call('POST', '/api/v1/jobs', {
      body: { name: 'my-job', cron_expr: '*/5 * * * *', command: 'echo hello' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^\d+$/),
      name: 'my-job',
      cron_expr: '*/5 * * * *',
      timezone: 'UTC',
      run_at: null,
      command: 'echo hello',
      handler: null,
      payload: null,
      status: 'active',
      max_retries: 3,
      timeout_seconds: 300,
      backoff: { base_seconds: 1, factor: 2, max_seconds: 300, jitter: 'full' },
      lane: 'short',
      priority: 0,
      overlap: 'allow',
      misfire: 'run_once',
      catch_up_max: 10,
      misfire_deadline_seconds: null,
      retention_days: null,
      last_run_at: null,
    });
    const schedule = parseCron('*/5 * * * *');
    if (!schedule.ok) throw new Error(schedule.error);
    const expected = nextFireTime(schedule.schedule, before)!;
    expect([expected.toISOString(), nextFireTime(schedule.schedule, new Date())!.toISOString()]).toContain(
      res.body.next_run_at,
    );
    expect(Date.parse(res.body.created_at)).not.toBeNaN();
  });

  it('maps every field to the stored job (seconds to ms) and back', async () => {
    const res = await h.call('POST', '/api/v1/jobs', {
      body: {
        name: '  padded name  ',
        cron_expr: '0 9 * * 1-5',
        timezone: 'Europe/Paris',
        handler: 'noop',
        payload: { region: 'eu', n: [1, 2] },
        max_retries: 7,
        timeout_seconds: 900,
        backoff: { base_seconds: 0.5, factor: 3, max_seconds: 60, jitter: 'none' },
        lane: 'long',
        priority: -5,
        overlap: 'forbid',
        misfire: 'catch_up',
        catch_up_max: 4,
        misfire_deadline_seconds: 3600,
        retention_days: 7,
        status: 'paused',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'padded name',
      timezone: 'Europe/Paris',
      handler: 'noop',
      command: null,
      payload: { region: 'eu', n: [1, 2] },
      max_retries: 7,
      timeout_seconds: 900,
      backoff: { base_seconds: 0.5, factor: 3, max_seconds: 60, jitter: 'none' },
      lane: 'long',
      priority: -5,
      overlap: 'forbid',
      misfire: 'catch_up',
      catch_up_max: 4,
      misfire_deadline_seconds: 3600,
      retention_days: 7,
      status: 'paused',
      next_run_at: null,
    });
    const stored = await h.env.store.jobGet(res.body.id);
    expect(stored).toMatchObject({
      timeoutMs: 900_000,
      backoff: { baseMs: 500, factor: 3, maxMs: 60_000, jitter: 'none' },
      misfireDeadlineMs: 3_600_000,
      retentionDays: 7,
      catchUpMax: 4,
    });
  });

  it('defaults the lane from the timeout and refuses the short lane above its limit', async () => {
    const long = await h.createJob({ timeout_seconds: 601 });
    expect(long.lane).toBe('long');
    const short = await h.createJob({ timeout_seconds: 600 });
    expect(short.lane).toBe('short');
    const res = await h.call('POST', '/api/v1/jobs', {
      body: { name: 'x', command: 'true', timeout_seconds: 3600, lane: 'short' },
    });
    expect(res.status).toBe(400);
    expect(errorOf(res).details).toEqual([{ path: 'lane', message: expect.stringContaining('up to 600') }]);
  });

  it('schedules a one-off job at run_at, and a manual-only job never', async () => {
    const runAt = new Date(Date.now() + 3_600_000).toISOString();
    const once = await h.createJob({ run_at: runAt });
    expect(once.run_at).toBe(runAt);
    expect(once.next_run_at).toBe(runAt);
    const offset = await h.createJob({ run_at: '2030-01-01T02:00:00+02:00' });
    expect(offset.run_at).toBe('2030-01-01T00:00:00.000Z');
    const manual = await h.createJob();
    expect(manual.next_run_at).toBeNull();
    expect(manual.cron_expr).toBeNull();
  });

  it('answers 409 for a duplicate live name, and frees the name when the job is deleted', async () => {
    const job = await h.createJob({ name: 'unique' });
    const dup = await h.call('POST', '/api/v1/jobs', { body: { name: 'unique', command: 'true' } });
    expect(dup.status).toBe(409);
    expect(errorOf(dup)).toMatchObject({ code: 'conflict', message: expect.stringContaining('unique') });
    expect((await h.call('DELETE', `/api/v1/jobs/${job.id}`)).status).toBe(204);
    expect((await h.call('POST', '/api/v1/jobs', { body: { name: 'unique', command: 'true' } })).status).toBe(201);
  });

  const invalid: [string, Record<string, unknown>, string, RegExp | string][] = [
    [
      'an invalid cron expression (with the parser message)',
      { cron_expr: 'bogus' },
      'cron_expr',
      parseCronError('bogus'),
    ],
    ['an impossible cron expression', { cron_expr: '0 0 30 2 *' }, 'cron_expr', parseCronError('0 0 30 2 *')],
    ['a cron field out of range', { cron_expr: '61 * * * *' }, 'cron_expr', parseCronError('61 * * * *')],
    ['an unknown time zone', { cron_expr: '0 * * * *', timezone: 'Mars/Base' }, 'timezone', /unknown time zone/],
    [
      'cron_expr and run_at together',
      { cron_expr: '0 * * * *', run_at: '2030-01-01T00:00:00Z' },
      'run_at',
      /mutually exclusive/,
    ],
    [
      'command and handler together',
      { handler: 'noop' },
      'handler',
      /give exactly one target \(command, handler, http or lambda\), not command and handler/,
    ],
    ['neither command nor handler', { command: undefined }, 'command', /give exactly one target: command/],
    ['an unknown field', { colour: 'blue' }, 'colour', 'unknown field'],
    ['a blank name', { name: '   ' }, 'name', /1 character|>=1/],
    ['a name with a control character', { name: 'bell\u0007' }, 'name', /control characters/],
    ['a name over 200 characters', { name: 'n'.repeat(201) }, 'name', /200/],
    ['an empty command', { command: '' }, 'command', /1 character|>=1/],
    ['a command over 10000 characters', { command: 'x'.repeat(10_001) }, 'command', /10000/],
    ['an invalid handler name', { command: undefined, handler: 'bad name!' }, 'handler', /A-Za-z0-9/],
    ['a payload over 64 KiB', { payload: 'p'.repeat(70_000) }, 'payload', /64 KiB/],
    ['a NUL character in the command (PostgreSQL cannot store it)', { command: 'echo \u0000' }, 'command', /NUL/],
    ['a NUL character in a payload string', { payload: { note: 'a\u0000b' } }, 'payload', /NUL/],
    ['a NUL character in a payload key', { payload: { ['k\u0000']: 1 } }, 'payload', /NUL/],
    ['max_retries over 100', { max_retries: 101 }, 'max_retries', /100/],
    ['a fractional max_retries', { max_retries: 1.5 }, 'max_retries', /int/i],
    ['a timeout of 0', { timeout_seconds: 0 }, 'timeout_seconds', /1/],
    ['a timeout over a day', { timeout_seconds: 86_401 }, 'timeout_seconds', /86400/],
    ['a backoff factor over 10', { backoff: { factor: 11 } }, 'backoff.factor', /10/],
    ['an unknown backoff field', { backoff: { base: 1 } }, 'backoff.base', 'unknown field'],
    [
      'a backoff ceiling below its base',
      { backoff: { base_seconds: 10, max_seconds: 5 } },
      'backoff.max_seconds',
      /base_seconds/,
    ],
    ['an unknown jitter', { backoff: { jitter: 'partial' } }, 'backoff.jitter', /full|none/],
    ['an unknown lane', { lane: 'medium' }, 'lane', /short|long/],
    ['a priority over 100', { priority: 101 }, 'priority', /100/],
    ['an unknown overlap policy', { overlap: 'sometimes' }, 'overlap', /allow/],
    ['an unknown misfire policy', { misfire: 'later' }, 'misfire', /run_once/],
    ['a catch_up_max of 0', { catch_up_max: 0 }, 'catch_up_max', /1/],
    ['a misfire deadline of 0', { misfire_deadline_seconds: 0 }, 'misfire_deadline_seconds', /1/],
    ['a negative retention', { retention_days: -1 }, 'retention_days', /0/],
    ['a retention of a fraction of a day', { retention_days: 1.5 }, 'retention_days', /int/],
    ['a retention over 100 years', { retention_days: 36_501 }, 'retention_days', /36500/],
    ['a retention that is not a number', { retention_days: '30d' }, 'retention_days', /number/],
    ['an unknown status', { status: 'deleted' }, 'status', /active/],
    ['a run_at that is not an instant', { run_at: 'tomorrow' }, 'run_at', /datetime|date/i],
    ['a missing name', { name: undefined }, 'name', 'is required'],
    ['a name of the wrong type', { name: 42 }, 'name', /string/],
  ];

  it.each(invalid)('answers 400 for %s', async (_label, fields, path, message) => {
    const body = { name: 'valid-name', command: 'echo ok', ...fields };
    const res = await h.call('POST', '/api/v1/jobs', { body });
    expect(res.status).toBe(400);
    const error = errorOf(res);
    expect(error.code).toBe('validation_failed');
    const detail = error.details?.find((d) => d.path === path);
    expect(detail, JSON.stringify(error)).toBeDefined();
    if (typeof message === 'string') expect(detail!.message).toBe(message);
    else expect(detail!.message).toMatch(message);
    expect(error.message).toContain(path);
  });

  it('reports every problem of a body at once', async () => {
    const res = await h.call('POST', '/api/v1/jobs', {
      body: { cron_expr: '0 0 30 2 *', command: 'a', handler: 'b', extra: true },
    });
    expect(res.status).toBe(400);
    expect(
      errorOf(res)
        .details!.map((d) => d.path)
        .sort(),
    ).toEqual(['cron_expr', 'extra', 'handler', 'name']);
  });

  it('answers 400 for a body that is JSON but not an object', async () => {
    for (const body of [[], 'text', 42, null]) {
      const res = await h.call('POST', '/api/v1/jobs', {
        raw: JSON.stringify(body),
        headers: { 'Content-Type': 'application/json' },
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(errorOf(res).code).toBe('validation_failed');
    }
  });

  it('answers 400 invalid_json for a malformed or empty body', async () => {
    for (const raw of ['{"name": ', '']) {
      const res = await h.call('POST', '/api/v1/jobs', { raw, headers: { 'Content-Type': 'application/json' } });
      expect(res.status).toBe(400);
      expect(errorOf(res)).toEqual({ code: 'invalid_json', message: 'request body is not valid JSON' });
    }
  });

  it('answers 415 for a body that is not declared as JSON', async () => {
    const body = JSON.stringify({ name: 'x', command: 'true' });
    for (const headers of [
      { 'Content-Type': 'text/plain' },
      { 'Content-Type': 'application/x-www-form-urlencoded' },
      {},
    ] as Record<string, string>[]) {
      const res = await h.call('POST', '/api/v1/jobs', { raw: body, headers });
      expect(res.status, JSON.stringify(headers)).toBe(415);
      expect(errorOf(res).code).toBe('unsupported_media_type');
    }
    const charset = await h.call('POST', '/api/v1/jobs', {
      raw: body,
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    });
    expect(charset.status).toBe(201);
  });
});

describe('GET /api/v1/jobs', () => {
  it('answers an empty list as []', async () => {
    const res = await h.call('GET', '/api/v1/jobs');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], next_cursor: null });
  });

  it('pages newest first with a keyset cursor that stays stable while jobs are added', async () => {
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await h.createJob({ name: `page-${i}` }));
    const ids = created.map((j) => j.id).reverse();

    const first = await h.call('GET', '/api/v1/jobs?limit=2');
    expect(first.body.data.map((j: any) => j.id)).toEqual(ids.slice(0, 2));
    expect(first.body.next_cursor).toBe(ids[1]);

    // Inserted between pages: newer than every id, so they never show up on a later page nor shift it.
    await h.createJob({ name: 'late-1' });
    await h.createJob({ name: 'late-2' });

    const second = await h.call('GET', `/api/v1/jobs?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.data.map((j: any) => j.id)).toEqual(ids.slice(2, 4));
    const third = await h.call('GET', `/api/v1/jobs?limit=2&cursor=${second.body.next_cursor}`);
    expect(third.body.data.map((j: any) => j.id)).toEqual(ids.slice(4));
    expect(third.body.next_cursor).toBeNull();

    const all = await h.call('GET', '/api/v1/jobs?limit=200');
    expect(all.body.data).toHaveLength(7);
    expect(all.body.next_cursor).toBeNull();
  });

  it('filters by status', async () => {
    const paused = await h.createJob({ status: 'paused' });
    await h.createJob();
    const res = await h.call('GET', '/api/v1/jobs?status=paused');
    expect(res.body.data.map((j: any) => j.id)).toEqual([paused.id]);
  });

  it('answers 400 for a bad limit, cursor or status', async () => {
    for (const query of [
      'limit=0',
      'limit=201',
      'limit=abc',
      'limit=2.5',
      'cursor=abc',
      'cursor=-1',
      'status=deleted',
    ]) {
      const res = await h.call('GET', `/api/v1/jobs?${query}`);
      expect(res.status, query).toBe(400);
      expect(errorOf(res).code).toBe('validation_failed');
    }
  });
});

describe('GET and DELETE /api/v1/jobs/:id', () => {
  it('reads a job', async () => {
    const job = await h.createJob({ cron_expr: '0 * * * *' });
    const res = await h.call('GET', `/api/v1/jobs/${job.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(job);
  });

  it('answers 404 for unknown and malformed ids, never 500', async () => {
    for (const id of ['999999', 'abc', '0', '-1', '1.5', '99999999999999999999999999', '%20', "1'--"]) {
      for (const [method, path] of [
        ['GET', `/api/v1/jobs/${id}`],
        ['DELETE', `/api/v1/jobs/${id}`],
        ['POST', `/api/v1/jobs/${id}/trigger`],
        ['POST', `/api/v1/jobs/${id}/pause`],
        ['POST', `/api/v1/jobs/${id}/resume`],
        ['GET', `/api/v1/jobs/${id}/executions`],
      ] as const) {
        const res = await h.call(method, path);
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(errorOf(res).code).toBe('not_found');
      }
    }
  });

  it('deletes: 204, no further runs, live executions cancelled, history kept', async () => {
    const job = await h.createJob({ cron_expr: '* * * * *' });
    const run = await h.call('POST', `/api/v1/jobs/${job.id}/trigger`);
    const res = await h.call('DELETE', `/api/v1/jobs/${job.id}`);
    expect(res.status).toBe(204);
    expect(res.body).toBe('');
    expect((await h.call('GET', `/api/v1/jobs/${job.id}`)).status).toBe(404);
    expect((await h.call('DELETE', `/api/v1/jobs/${job.id}`)).status).toBe(404);
    expect((await h.call('POST', `/api/v1/jobs/${job.id}/trigger`)).status).toBe(404);
    const history = await h.call('GET', `/api/v1/executions?job_id=${job.id}`);
    expect(history.body.data).toEqual([expect.objectContaining({ id: run.body.id, status: 'cancelled' })]);
    expect((await h.env.queue.depth()).short.ready).toBe(0);
  });
});

describe('POST /api/v1/jobs/:id/trigger', () => {
  it('queues a manual run with an optional payload', async () => {
    const job = await h.createJob();
    const res = await h.call('POST', `/api/v1/jobs/${job.id}/trigger`, { body: { payload: { to: 'ops' } } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      job_id: job.id,
      status: 'queued',
      trigger: 'manual',
      attempt: 1,
      payload: { to: 'ops' },
    });
    expect(res.body.root_id).toBe(res.body.id);
    expect((await h.env.queue.depth()).short.ready).toBe(1);
  });

  it('accepts no body, and an empty body declared as JSON', async () => {
    const job = await h.createJob();
    expect((await h.call('POST', `/api/v1/jobs/${job.id}/trigger`)).status).toBe(201);
    const empty = await h.call('POST', `/api/v1/jobs/${job.id}/trigger`, {
      raw: '',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(empty.status).toBe(201);
    expect(empty.body.payload).toBeNull();
  });

  it('rejects a bad body', async () => {
    const job = await h.createJob();
    const path = `/api/v1/jobs/${job.id}/trigger`;
    expect((await h.call('POST', path, { body: { payload: 1, extra: 2 } })).status).toBe(400);
    expect((await h.call('POST', path, { body: { payload: 'p'.repeat(70_000) } })).status).toBe(400);
    expect((await h.call('POST', path, { body: { payload: ['\u0000'] } })).status).toBe(400);
    expect((await h.call('POST', path, { raw: '{', headers: { 'Content-Type': 'application/json' } })).status).toBe(
      400,
    );
    expect((await h.call('POST', path, { raw: 'payload=1', headers: { 'Content-Type': 'text/plain' } })).status).toBe(
      415,
    );
  });

  it('returns the same execution for a repeated Idempotency-Key: 201 first, 200 after', async () => {
    const job = await h.createJob();
    const path = `/api/v1/jobs/${job.id}/trigger`;
    const first = await h.call('POST', path, { body: { payload: 1 }, headers: { 'Idempotency-Key': 'deploy-42' } });
    const again = await h.call('POST', path, { body: { payload: 1 }, headers: { 'Idempotency-Key': 'deploy-42' } });
    const other = await h.call('POST', path, { body: { payload: 1 }, headers: { 'Idempotency-Key': 'deploy-43' } });
    expect([first.status, again.status, other.status]).toEqual([201, 200, 201]);
    expect(again.body.id).toBe(first.body.id);
    expect(other.body.id).not.toBe(first.body.id);
    expect((await h.env.queue.depth()).short.ready).toBe(2);
  });

  it('creates one execution for concurrent calls with the same key', async () => {
    const job = await h.createJob();
    const calls = await Promise.all(
      Array.from({ length: 6 }, () =>
        h.call('POST', `/api/v1/jobs/${job.id}/trigger`, { headers: { 'Idempotency-Key': 'race' } }),
      ),
    );
    expect(new Set(calls.map((c) => c.body.id)).size).toBe(1);
    expect(calls.filter((c) => c.status === 201)).toHaveLength(1);
  });

  it('answers 400 for an Idempotency-Key over 200 characters', async () => {
    const job = await h.createJob();
    const res = await h.call('POST', `/api/v1/jobs/${job.id}/trigger`, {
      headers: { 'Idempotency-Key': 'k'.repeat(201) },
    });
    expect(res.status).toBe(400);
    expect(errorOf(res).details![0]!.path).toBe('Idempotency-Key');
  });
});

describe('pause and resume', () => {
  it('pauses (cancelling materialised scheduled runs) and resumes from now without a burst', async () => {
    const clock = manualClock('2025-06-01T10:00:30Z');
    await h.cleanup();
    h = await apiHarness({ clock });
    const job = await h.createJob({ cron_expr: '0 * * * *' });
    expect(job.next_run_at).toBe('2025-06-01T11:00:00.000Z');

    const paused = await h.call('POST', `/api/v1/jobs/${job.id}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ status: 'paused', next_run_at: null });

    clock.set('2025-06-01T15:20:00Z');
    const resumed = await h.call('POST', `/api/v1/jobs/${job.id}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'active', next_run_at: '2025-06-01T16:00:00.000Z' });
  });

  it('cancels queued scheduled runs when pausing, and keeps manual ones', async () => {
    const { runTick } = await import('@jobs/core');
    const job = await h.createJob({ cron_expr: '* * * * * *' });
    await runTick(h.deps, { lookaheadMs: 3000 });
    const manual = await h.call('POST', `/api/v1/jobs/${job.id}/trigger`);
    const queuedBefore = await h.call('GET', `/api/v1/jobs/${job.id}/executions?status=queued&limit=200`);
    expect(queuedBefore.body.data.length).toBeGreaterThan(1);
    await h.call('POST', `/api/v1/jobs/${job.id}/pause`);
    const queued = await h.call('GET', `/api/v1/jobs/${job.id}/executions?status=queued`);
    expect(queued.body.data.map((e: any) => e.id)).toEqual([manual.body.id]);
  });
});

describe('GET /api/v1/jobs/:id/executions', () => {
  it("lists a job's executions newest first, paginated and filtered", async () => {
    const job = await h.createJob();
    const other = await h.createJob();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await h.call('POST', `/api/v1/jobs/${job.id}/trigger`)).body.id);
    await h.call('POST', `/api/v1/jobs/${other.id}/trigger`);
    await h.call('POST', `/api/v1/executions/${ids[0]}/cancel`);

    const page1 = await h.call('GET', `/api/v1/jobs/${job.id}/executions?limit=2`);
    expect(page1.body.data.map((e: any) => e.id)).toEqual([ids[2], ids[1]]);
    const page2 = await h.call('GET', `/api/v1/jobs/${job.id}/executions?limit=2&cursor=${page1.body.next_cursor}`);
    expect(page2.body).toEqual({
      data: [expect.objectContaining({ id: ids[0], status: 'cancelled' })],
      next_cursor: null,
    });
    const cancelled = await h.call('GET', `/api/v1/jobs/${job.id}/executions?status=cancelled`);
    expect(cancelled.body.data.map((e: any) => e.id)).toEqual([ids[0]]);
    const none = await h.call('GET', `/api/v1/jobs/${other.id}/executions?status=dead`);
    expect(none.body).toEqual({ data: [], next_cursor: null });
  });
});

function parseCronError(expr: string): string {
  const parsed = parseCron(expr);
  if (parsed.ok) throw new Error(`${expr} parses`);
  return parsed.error;
}
