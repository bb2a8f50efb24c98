import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isoString } from '@jobs/core';
import { createStore } from '@jobs/store';
import pg from 'pg';
import { engine } from '../support/engine';
import { eventually, schemaUrl } from '../support/env';
import { apiHarness, type Harness } from './harness';

let h: Harness;
let e: ReturnType<typeof engine>;
beforeEach(async () => {
  h = await apiHarness();
  e = engine(h.env);
});
afterEach(async () => {
  await e.stopAll();
  await h.cleanup();
});

const errorOf = (res: { body: any }) => res.body.error as { code: string; message: string };

/** Creates a job, triggers it, and waits until the execution reaches `status`. */
async function runToStatus(fields: Record<string, unknown>, status: string) {
  const job = await h.createJob(fields);
  const triggered = await h.call('POST', `/api/v1/jobs/${job.id}/trigger`);
  const done = await eventually(async () => {
    const res = await h.call('GET', `/api/v1/executions/${triggered.body.id}`);
    return res.body.status === status ? res.body : null;
  });
  return { job, execution: done };
}

describe('GET /api/v1/executions/:id', () => {
  it('shows output, exit code, attempt, worker, timestamps and duration of a finished run', async () => {
    await e.worker();
    const { job, execution } = await runToStatus({ command: 'echo hello' }, 'succeeded');
    expect(execution).toMatchObject({
      job_id: job.id,
      status: 'succeeded',
      trigger: 'manual',
      attempt: 1,
      root_id: execution.id,
      retry_of: null,
      output: 'hello\n',
      exit_code: 0,
      error: null,
      worker_id: expect.stringMatching(/^test-/),
      lane: 'short',
    });
    expect(execution.duration_ms).toBeGreaterThanOrEqual(0);
    for (const field of ['scheduled_for', 'queued_at', 'started_at', 'finished_at']) {
      expect(Date.parse(execution[field]), field).not.toBeNaN();
    }
  });

  it('links retries to the attempt they retry and to the first attempt', async () => {
    await e.worker();
    const job = await h.createJob({
      command: 'exit 4',
      max_retries: 1,
      backoff: { base_seconds: 0.05, max_seconds: 0.1 },
    });
    const first = await h.call('POST', `/api/v1/jobs/${job.id}/trigger`);
    const chain = await eventually(async () => {
      const res = await h.call('GET', `/api/v1/jobs/${job.id}/executions`);
      return res.body.data.length === 2 && res.body.data[0].status === 'dead' ? res.body.data : null;
    });
    expect(chain[0]).toMatchObject({
      attempt: 2,
      trigger: 'retry',
      retry_of: first.body.id,
      root_id: first.body.id,
      exit_code: 4,
    });
    expect(chain[1]).toMatchObject({ id: first.body.id, attempt: 1, status: 'failed' });
  });

  it('answers 404 for unknown and malformed ids', async () => {
    for (const id of ['424242', 'abc', '0', '1e3']) {
      for (const [method, suffix] of [
        ['GET', ''],
        ['POST', '/cancel'],
        ['POST', '/replay'],
      ] as const) {
        const res = await h.call(method, `/api/v1/executions/${id}${suffix}`);
        expect(res.status, `${method} ${id}${suffix}`).toBe(404);
        expect(errorOf(res).code).toBe('not_found');
      }
    }
  });
});

describe('GET /api/v1/executions', () => {
  it('lists newest first, filtered by status and job_id, with [] when empty', async () => {
    expect((await h.call('GET', '/api/v1/executions')).body).toEqual({ data: [], next_cursor: null });
    const a = await h.createJob();
    const b = await h.createJob();
    const a1 = (await h.call('POST', `/api/v1/jobs/${a.id}/trigger`)).body;
    const b1 = (await h.call('POST', `/api/v1/jobs/${b.id}/trigger`)).body;
    const a2 = (await h.call('POST', `/api/v1/jobs/${a.id}/trigger`)).body;
    await h.call('POST', `/api/v1/executions/${a2.id}/cancel`);

    const all = await h.call('GET', '/api/v1/executions');
    expect(all.body.data.map((x: any) => x.id)).toEqual([a2.id, b1.id, a1.id]);
    const ofA = await h.call('GET', `/api/v1/executions?job_id=${a.id}`);
    expect(ofA.body.data.map((x: any) => x.id)).toEqual([a2.id, a1.id]);
    const queuedOfA = await h.call('GET', `/api/v1/executions?job_id=${a.id}&status=queued`);
    expect(queuedOfA.body.data.map((x: any) => x.id)).toEqual([a1.id]);

    const page1 = await h.call('GET', '/api/v1/executions?limit=2');
    const page2 = await h.call('GET', `/api/v1/executions?limit=2&cursor=${page1.body.next_cursor}`);
    expect([...page1.body.data, ...page2.body.data].map((x: any) => x.id)).toEqual([a2.id, b1.id, a1.id]);
    expect(page2.body.next_cursor).toBeNull();
  });

  it('answers 400 for bad filters', async () => {
    for (const query of ['status=lost', 'job_id=abc', 'limit=500', 'cursor=x']) {
      expect((await h.call('GET', `/api/v1/executions?${query}`)).status, query).toBe(400);
    }
  });
});

describe('list rows, read with their instants as text', () => {
  /** Rows by SQL with what the Date path has to get right: microseconds, nulls, a lease, retries, long and odd errors. */
  async function oddRows(jobId: string) {
    const long = `${'é"\\\u0001\n'.repeat(600)}🙂`;
    await h.env.pool.query(
      `INSERT INTO executions (job_id, trigger, status, lane, priority, scheduled_for, queued_at, started_at, finished_at,
                               lease_expires_at, worker_id, duration_ms, exit_code, error, job_version, replayed_by)
       VALUES ($1, 'cron', 'succeeded', 'short', 5, '2026-03-29 01:30:00.123456+01', '2026-03-29 01:30:00.1+01',
               '2026-03-29 00:30:00.999999+00', '2026-03-29 00:30:01+00', NULL, 'w "1" ünï', 1001, 0, NULL, 3, NULL),
              ($1, 'manual', 'running', 'long', -3, '1999-12-31 23:59:59.9999+00', '2000-01-01 00:00:00+00',
               '2000-01-01 00:00:00.000001+00', NULL, '2000-01-01 00:05:00.5+00', 'w2', NULL, NULL, NULL, NULL, NULL),
              ($1, 'retry', 'dead', 'short', 0, now(), now(), now(), now(), NULL, NULL, 7, 137, $2, 1, NULL)`,
      [jobId, long],
    );
    const { rows } = await h.env.pool.query(`SELECT id FROM executions WHERE job_id = $1 ORDER BY id`, [jobId]);
    await h.env.pool.query(`UPDATE executions SET retry_of = $1, root_id = $1, replayed_by = $2 WHERE id = $3`, [
      rows[0].id,
      rows[1].id,
      rows[2].id,
    ]);
  }

  it('are what GET /executions/{id} says of the same execution, the error cut as lists cut it', async () => {
    const job = await h.createJob({ command: 'true' });
    await oddRows(job.id);
    for (const path of [
      `/api/v1/executions?job_id=${job.id}`,
      `/api/v1/jobs/${job.id}/executions`,
      '/api/v1/executions?status=dead',
    ]) {
      const list = await h.call('GET', path);
      expect(list.status).toBe(200);
      expect(list.body.data.length).toBeGreaterThan(0);
      for (const row of list.body.data) {
        const { payload, output, delivery_count, deliveries, ...one } = (
          await h.call('GET', `/api/v1/executions/${row.id}`)
        ).body;
        expect(Object.keys(row).sort()).toEqual(Object.keys(one).sort());
        if (one.error?.length > 2048) one.error = `${one.error.slice(0, 2048)}… [truncated]`;
        expect(row).toEqual(one);
      }
    }
    const [first] = (await h.call('GET', `/api/v1/executions?job_id=${job.id}`)).body.data.slice(-1);
    expect(first).toMatchObject({
      scheduled_for: '2026-03-29T00:30:00.123Z',
      queued_at: '2026-03-29T00:30:00.100Z',
      started_at: '2026-03-29T00:30:00.999Z',
      finished_at: '2026-03-29T00:30:01.000Z',
      worker_id: 'w "1" ünï',
    });
  });

  it("do not depend on the session's TimeZone", async () => {
    const job = await h.createJob({ command: 'true' });
    await oddRows(job.id);
    const url = new URL(schemaUrl(h.env.schema));
    url.searchParams.set('options', `${url.searchParams.get('options')} -c TimeZone=Asia/Kathmandu`);
    const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
    try {
      const store = createStore(pool);
      expect((await pool.query('SHOW TimeZone')).rows[0].TimeZone).toBe('Asia/Kathmandu');
      for (const status of [undefined, 'running', 'dead'] as const) {
        const iso = await store.executionListIso({ jobId: job.id, status, limit: 10 });
        const dated = await h.env.store.executionList({ jobId: job.id, status, limit: 10 });
        expect(iso.length).toBe(dated.length);
        expect(iso).toEqual(
          dated.map(({ outputTail, jobName, ...e }) => ({
            ...e,
            scheduledFor: isoString(e.scheduledFor),
            queuedAt: isoString(e.queuedAt),
            startedAt: e.startedAt && isoString(e.startedAt),
            finishedAt: e.finishedAt && isoString(e.finishedAt),
            leaseExpiresAt: e.leaseExpiresAt && isoString(e.leaseExpiresAt),
          })),
        );
      }
    } finally {
      await pool.end();
    }
  });
});

describe('POST /api/v1/executions/:id/cancel', () => {
  it('cancels a queued execution and answers 409 once it is final', async () => {
    const job = await h.createJob();
    const run = (await h.call('POST', `/api/v1/jobs/${job.id}/trigger`)).body;
    const res = await h.call('POST', `/api/v1/executions/${run.id}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: run.id, status: 'cancelled', error: 'cancelled by request' });
    expect(res.body.finished_at).not.toBeNull();
    expect((await h.env.queue.depth()).short.ready).toBe(0);

    const again = await h.call('POST', `/api/v1/executions/${run.id}/cancel`);
    expect(again.status).toBe(409);
    expect(errorOf(again)).toMatchObject({ code: 'conflict', message: expect.stringContaining('already cancelled') });
  });

  it('kills a running command', async () => {
    const worker = await e.worker();
    const { execution } = await runToStatus({ command: 'sleep 30' }, 'running');
    const res = await h.call('POST', `/api/v1/executions/${execution.id}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('cancelled');
    // The worker kills the command at its next heartbeat (this in-process worker has no pub/sub subscription).
    await eventually(() => worker.inFlight === 0, 10_000);
    await eventually(async () => (await h.env.queue.depth()).short.running === 0);
    expect((await h.call('GET', `/api/v1/executions/${execution.id}`)).body.status).toBe('cancelled');
    expect(h.rec.transitions).toContainEqual(
      expect.objectContaining({ executionId: execution.id, from: 'running', to: 'cancelled' }),
    );
  });

  it('answers 409 for a succeeded execution', async () => {
    await e.worker();
    const { execution } = await runToStatus({ command: 'true' }, 'succeeded');
    const res = await h.call('POST', `/api/v1/executions/${execution.id}/cancel`);
    expect(res.status).toBe(409);
    expect(errorOf(res).message).toContain('succeeded');
  });
});

describe('POST /api/v1/executions/:id/replay', () => {
  it('replays a dead execution as a new attempt chain (201), and refuses anything not dead or failed (409)', async () => {
    await e.worker();
    const { job, execution } = await runToStatus({ command: 'exit 3', max_retries: 0 }, 'dead');
    const res = await h.call('POST', `/api/v1/executions/${execution.id}/replay`);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ job_id: job.id, trigger: 'replay', attempt: 1, retry_of: execution.id });
    expect(res.body.id).not.toBe(execution.id);
    expect(await h.env.queue.deadIds('short')).not.toContain(execution.id);

    const ok = await runToStatus({ command: 'true' }, 'succeeded');
    const refused = await h.call('POST', `/api/v1/executions/${ok.execution.id}/replay`);
    expect(refused.status).toBe(409);
    expect(errorOf(refused).message).toMatch(/is succeeded; only dead or failed/);
  });

  it('answers 409 for a queued execution and for one whose job was deleted', async () => {
    const job = await h.createJob();
    const queued = (await h.call('POST', `/api/v1/jobs/${job.id}/trigger`)).body;
    expect((await h.call('POST', `/api/v1/executions/${queued.id}/replay`)).status).toBe(409);

    await e.worker();
    const dead = await runToStatus({ command: 'exit 1', max_retries: 0 }, 'dead');
    await h.call('DELETE', `/api/v1/jobs/${dead.job.id}`);
    const res = await h.call('POST', `/api/v1/executions/${dead.execution.id}/replay`);
    expect(res.status).toBe(409);
    expect(errorOf(res).message).toContain('deleted job');
  });
});

describe('one replay per dead or failed execution', () => {
  it('marks the replayed execution with a link to its replay; a second replay is 409 unless forced', async () => {
    await e.worker();
    const { execution } = await runToStatus({ command: 'exit 3', max_retries: 0 }, 'dead');
    const first = await h.call('POST', `/api/v1/executions/${execution.id}/replay`);
    expect(first.status).toBe(201);
    expect((await h.call('GET', `/api/v1/executions/${execution.id}`)).body).toMatchObject({
      status: 'dead',
      replayed_by: first.body.id,
    });
    expect(first.body.replayed_by).toBeNull();

    const second = await h.call('POST', `/api/v1/executions/${execution.id}/replay`);
    expect(second.status).toBe(409);
    expect(errorOf(second)).toEqual({
      code: 'already_replayed',
      message: expect.stringContaining(`as execution ${first.body.id}; send {"force": true}`),
    });
    expect((await h.call('POST', `/api/v1/executions/${execution.id}/replay`, { body: { force: 'yes' } })).status).toBe(
      400,
    );
    expect((await h.call('POST', `/api/v1/executions/${execution.id}/replay`, { body: { forse: true } })).status).toBe(
      400,
    );

    const forced = await h.call('POST', `/api/v1/executions/${execution.id}/replay`, { body: { force: true } });
    expect(forced.status).toBe(201);
    expect((await h.call('GET', `/api/v1/executions/${execution.id}`)).body.replayed_by).toBe(forced.body.id);
  });

  it('makes one chain out of ten concurrent replays', async () => {
    await e.worker();
    const { execution } = await runToStatus({ command: 'exit 3', max_retries: 0 }, 'dead');
    await e.stopAll();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => h.call('POST', `/api/v1/executions/${execution.id}/replay`)),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    const created = answers.find((a) => a.status === 201)!.body.id;
    for (const a of answers.filter((a) => a.status === 409))
      expect(errorOf(a).message).toContain(`as execution ${created}`);
    const { rows } = await h.env.pool.query(
      `SELECT id::text FROM executions WHERE retry_of = $1 AND trigger = 'replay'`,
      [execution.id],
    );
    expect(rows).toEqual([{ id: created }]);
  });
});

describe('Idempotency-Key with another payload', () => {
  it('answers 422 idempotency_mismatch, and 200 for the same payload however it is spelled', async () => {
    const job = await h.createJob();
    const trigger = (body: unknown, key = 'deploy-42') =>
      h.call('POST', `/api/v1/jobs/${job.id}/trigger`, { body, headers: { 'Idempotency-Key': key } });
    const first = await trigger({ payload: { to: 'ops', n: 1 } });
    expect(first.status).toBe(201);
    const again = await trigger({ payload: { n: 1.0, to: 'ops' } });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    for (const other of [{ payload: { to: 'dev', n: 1 } }, {}, { payload: null }, { payload: [1] }]) {
      const res = await trigger(other);
      expect(res.status, JSON.stringify(other)).toBe(422);
      expect(errorOf(res)).toEqual({
        code: 'idempotency_mismatch',
        message: expect.stringContaining(`execution ${first.body.id}`),
      });
    }
    // No payload and null are the same run.
    expect((await trigger({}, 'k2')).status).toBe(201);
    expect((await trigger({ payload: null }, 'k2')).status).toBe(200);
    // Concurrent repeats with different payloads: one run, each other caller told which.
    const racing = await Promise.all(Array.from({ length: 8 }, (_, i) => trigger({ payload: { i: i % 2 } }, 'k3')));
    expect(racing.filter((r) => r.status === 201)).toHaveLength(1);
    expect(racing.every((r) => [200, 201, 422].includes(r.status))).toBe(true);
    const { rows } = await h.env.pool.query(`SELECT count(*)::int AS n FROM executions WHERE idempotency_key = 'k3'`);
    expect(rows[0].n).toBe(1);
  });
});
