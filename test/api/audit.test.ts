/**
 * The audit trail: each change through the API and the dashboard is one row with the key's name, written in the
 * transaction of the change (a change that fails leaves no row; an audit row that cannot be written undoes the
 * change), listed by GET /api/v1/audit with filters and keyset pages, and no key value is ever in a row, a log line
 * or an event.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formClient } from '../browser/form-client';
import { apiHarness, type Harness } from './harness';
import { ROLE_KEYS } from '../support/role-keys';

let h: Harness;
const admin = { Authorization: `Bearer ${ROLE_KEYS[2]!.key}` };
const operate = { Authorization: `Bearer ${ROLE_KEYS[1]!.key}` };

beforeEach(async () => {
  h = await apiHarness({ apiKeys: ROLE_KEYS });
});
afterEach(async () => {
  await h.cleanup();
});

const rows = async () =>
  (
    await h.env.pool.query(
      `SELECT key_name, action, target, outcome, request_id, source, changes FROM audit_log ORDER BY id`,
    )
  ).rows;

describe('audit rows', () => {
  it('records every change with the key name, the target, the request id and the changed fields', async () => {
    const job = (
      await h.call('POST', '/api/v1/jobs', {
        body: { name: 'billing', command: 'echo', cron_expr: '@daily', payload: { account: 7, api_token: 'tok-9' } },
        headers: { ...admin, 'X-Request-Id': 'req-create' },
      })
    ).body;
    expect((await h.call('POST', `/api/v1/jobs/${job.id}/pause`, { headers: operate })).status).toBe(200);
    expect((await h.call('POST', `/api/v1/jobs/${job.id}/resume`, { headers: operate })).status).toBe(200);
    const run = (await h.call('POST', `/api/v1/jobs/${job.id}/trigger`, { headers: operate })).body;
    expect((await h.call('POST', `/api/v1/executions/${run.id}/cancel`, { headers: operate })).status).toBe(200);
    expect((await h.call('POST', '/api/v1/lanes/long/pause', { headers: operate })).status).toBe(200);
    expect((await h.call('POST', '/api/v1/lanes/long/resume', { headers: operate })).status).toBe(200);
    await h.env.pool.query(`UPDATE executions SET status = 'dead', finished_at = now() WHERE id = $1`, [run.id]);
    const replay = (await h.call('POST', `/api/v1/executions/${run.id}/replay`, { headers: operate })).body;
    expect((await h.call('DELETE', `/api/v1/jobs/${job.id}`, { headers: admin })).status).toBe(204);

    const all = await rows();
    expect(all.map((r) => [r.key_name, r.action, r.target, r.outcome])).toEqual([
      ['platform', 'job.create', `job:${job.id}`, 'ok'],
      ['ci', 'job.pause', `job:${job.id}`, 'ok'],
      ['ci', 'job.resume', `job:${job.id}`, 'ok'],
      ['ci', 'job.trigger', `job:${job.id}`, 'ok'],
      ['ci', 'execution.cancel', `execution:${run.id}`, 'ok'],
      ['ci', 'lane.pause', 'lane:long', 'ok'],
      ['ci', 'lane.resume', 'lane:long', 'ok'],
      ['ci', 'execution.replay', `execution:${run.id}`, 'ok'],
      ['platform', 'job.delete', `job:${job.id}`, 'ok'],
    ]);
    expect(all[0]!.request_id).toBe('req-create');
    expect(all[0]!.changes.name).toEqual({ old: null, new: 'billing' });
    expect(all[0]!.changes.payload.new).toEqual({ account: 7, api_token: '***' });
    expect(all[1]!.changes).toEqual({ status: { old: 'active', new: 'paused' } });
    expect(all[2]!.changes).toEqual({ status: { old: 'paused', new: 'active' } });
    expect(all[3]!.changes).toEqual({ execution: { old: null, new: run.id } });
    expect(all[4]!.changes).toEqual({ status: { old: 'queued', new: 'cancelled' } });
    expect(all[5]!.changes).toEqual({ paused: { old: false, new: true } });
    expect(all[7]!.changes).toEqual({ replayed_by: { old: null, new: replay.id } });

    // Key names in the log lines and events of those requests; key values, and the masked token, nowhere.
    expect(h.rec.transitions.filter((t) => t.by === 'ci').length).toBeGreaterThan(0);
    const everything = JSON.stringify([all, h.rec.logs, h.rec.transitions]);
    for (const k of ROLE_KEYS) expect(everything).not.toContain(k.key);
    expect(JSON.stringify(all)).not.toContain('tok-9');
  });

  it('records edits and backfills, and names the key as the author of each version', async () => {
    const job = (
      await h.call('POST', '/api/v1/jobs', {
        body: { name: 'edited', command: 'echo', cron_expr: '0 * * * *' },
        headers: admin,
      })
    ).body;
    const patched = await h.call('PATCH', `/api/v1/jobs/${job.id}`, {
      body: { priority: 4, payload: { password: 'pw-1' } },
      headers: admin,
    });
    expect(patched.status).toBe(200);
    expect((await h.call('PATCH', `/api/v1/jobs/${job.id}`, { body: { priority: 9 }, headers: operate })).status).toBe(
      403,
    );
    const put = await h.call('PUT', '/api/v1/jobs/by-name/declared', {
      body: { command: 'echo', cron_expr: '@daily' },
      headers: admin,
    });
    expect(put.status).toBe(201);
    const from = new Date(Date.now() - 3 * 3_600_000).toISOString();
    const backfill = await h.call('POST', `/api/v1/jobs/${job.id}/backfill`, {
      body: { from, to: new Date().toISOString() },
      headers: operate,
    });
    expect(backfill.status).toBe(200);
    expect(backfill.body.created).toBeGreaterThan(0);

    const versions = (await h.call('GET', `/api/v1/jobs/${job.id}/versions`, { headers: admin })).body.data;
    expect(versions.map((v: any) => v.actor)).toEqual(['platform', 'platform']);
    const all = await rows();
    const update = all.find((r) => r.action === 'job.update' && r.outcome === 'ok')!;
    expect(update).toMatchObject({ key_name: 'platform', target: `job:${job.id}` });
    expect(update.changes.priority).toEqual({ old: 0, new: 4 });
    expect(update.changes.payload.new).toEqual({ password: '***' });
    expect(all.find((r) => r.action === 'job.update' && r.outcome === 'refused')).toMatchObject({
      key_name: 'ci',
      target: `job:${job.id}`,
    });
    expect(all.find((r) => r.action === 'job.create' && r.target === `job:${put.body.id}`)).toMatchObject({
      key_name: 'platform',
    });
    expect(all.find((r) => r.action === 'job.backfill')).toMatchObject({
      key_name: 'ci',
      changes: { created: { old: 0, new: backfill.body.created } },
    });
    expect(JSON.stringify(all)).not.toContain('pw-1');
  });

  it('records triggers sent together (one batched statement) one row each', async () => {
    const job = (await h.call('POST', '/api/v1/jobs', { body: { name: 'many', command: 'echo' }, headers: admin }))
      .body;
    const runs = await Promise.all(
      Array.from({ length: 12 }, () => h.call('POST', `/api/v1/jobs/${job.id}/trigger`, { headers: operate })),
    );
    expect(runs.every((r) => r.status === 201)).toBe(true);
    const triggers = (await rows()).filter((r) => r.action === 'job.trigger');
    expect(triggers.map((r) => r.changes.execution.new).sort()).toEqual(runs.map((r) => r.body.id).sort());
    expect(new Set(triggers.map((r) => r.key_name))).toEqual(new Set(['ci']));
    // A repeated Idempotency-Key creates nothing, so it records nothing.
    const once = { ...operate, 'Idempotency-Key': 'same' };
    await h.call('POST', `/api/v1/jobs/${job.id}/trigger`, { headers: once });
    await h.call('POST', `/api/v1/jobs/${job.id}/trigger`, { headers: once });
    expect((await rows()).filter((r) => r.action === 'job.trigger')).toHaveLength(13);
  });

  it('leaves no row for a change that failed', async () => {
    const job = (await h.call('POST', '/api/v1/jobs', { body: { name: 'taken', command: 'echo' }, headers: admin }))
      .body;
    const before = (await rows()).length;
    expect(
      (await h.call('POST', '/api/v1/jobs', { body: { name: 'taken', command: 'echo' }, headers: admin })).status,
    ).toBe(409);
    expect((await h.call('POST', '/api/v1/jobs/999999/pause', { headers: operate })).status).toBe(404);
    expect((await h.call('POST', '/api/v1/jobs/999999/trigger', { headers: operate })).status).toBe(404);
    const run = (await h.call('POST', `/api/v1/jobs/${job.id}/trigger`, { headers: operate })).body;
    await h.call('POST', `/api/v1/executions/${run.id}/cancel`, { headers: operate });
    const after = (await rows()).length;
    expect(after).toBe(before + 2);
    expect((await h.call('POST', `/api/v1/executions/${run.id}/cancel`, { headers: operate })).status).toBe(409);
    expect((await h.call('POST', `/api/v1/executions/${run.id}/replay`, { headers: operate })).status).toBe(409);
    expect((await rows()).length).toBe(after);
  });

  it('undoes the change when its audit row cannot be written (one transaction)', async () => {
    const job = (
      await h.call('POST', '/api/v1/jobs', {
        body: { name: 'guarded', command: 'echo', cron_expr: '@daily' },
        headers: admin,
      })
    ).body;
    const run = (await h.call('POST', `/api/v1/jobs/${job.id}/trigger`, { headers: operate })).body;
    const b = formClient(h.app);
    await b.signIn(ROLE_KEYS[1]!.key);
    const csrf = await b.csrf('/');
    await h.env.pool.query(`ALTER TABLE audit_log ADD CONSTRAINT refuse_ci CHECK (key_name <> 'ci') NOT VALID`);
    h.rec.logs.length = 0;
    for (const [method, path] of [
      ['POST', `/api/v1/jobs/${job.id}/pause`],
      ['POST', `/api/v1/jobs/${job.id}/trigger`],
      ['POST', `/api/v1/executions/${run.id}/cancel`],
      ['POST', '/api/v1/lanes/short/pause'],
    ] as const) {
      expect((await h.call(method, path, { headers: operate })).status, path).toBe(500);
    }
    const read = (path: string) => h.call('GET', path, { headers: admin });
    expect((await read(`/api/v1/jobs/${job.id}`)).body.status).toBe('active');
    expect((await read(`/api/v1/jobs/${job.id}/executions`)).body.data.map((e: any) => [e.id, e.status])).toEqual([
      [run.id, 'queued'],
    ]);
    expect((await read('/api/v1/lanes')).body.data.find((l: any) => l.lane === 'short').paused).toBe(false);
    // The dashboard goes through the same commands.
    expect((await b.request('POST', `/jobs/${job.id}/pause`, { form: { _csrf: csrf } })).status).toBe(500);
    expect((await read(`/api/v1/jobs/${job.id}`)).body.status).toBe('active');
  });
});

describe('GET /api/v1/audit', () => {
  it('filters by key, action, target and outcome, in keyset pages, newest first', async () => {
    const job = (await h.call('POST', '/api/v1/jobs', { body: { name: 'paged', command: 'echo' }, headers: admin }))
      .body;
    for (let i = 0; i < 5; i++) await h.call('POST', `/api/v1/jobs/${job.id}/trigger`, { headers: operate });
    await h.call('DELETE', `/api/v1/jobs/${job.id}`, { headers: operate }); // refused: ci is an operate key

    const first = await h.call('GET', '/api/v1/audit?action=job.trigger&limit=2', { headers: admin });
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(2);
    const ids: string[] = first.body.data.map((r: any) => r.id);
    let cursor = first.body.next_cursor;
    while (cursor) {
      const page = await h.call('GET', `/api/v1/audit?action=job.trigger&limit=2&cursor=${cursor}`, { headers: admin });
      ids.push(...page.body.data.map((r: any) => r.id));
      cursor = page.body.next_cursor;
    }
    expect(ids).toHaveLength(5);
    expect([...ids].sort((a, b) => Number(b) - Number(a))).toEqual(ids);

    const byKey = await h.call('GET', '/api/v1/audit?key=platform', { headers: admin });
    expect(byKey.body.data.map((r: any) => r.action)).toEqual(['job.create']);
    const refused = await h.call('GET', `/api/v1/audit?outcome=refused&target=job:${job.id}`, { headers: admin });
    expect(refused.body.data).toMatchObject([{ key: 'ci', action: 'job.delete', outcome: 'refused', changes: null }]);
    expect(refused.body.data[0]).toMatchObject({ at: expect.any(String), request_id: expect.any(String) });

    expect((await h.call('GET', '/api/v1/audit?action=job.explode', { headers: admin })).status).toBe(400);
    expect((await h.call('GET', '/api/v1/audit', { headers: operate })).status).toBe(403);
    const peeked = await h.call('GET', '/api/v1/audit?action=audit.read', { headers: admin });
    expect(peeked.body.data).toMatchObject([
      { key: 'ci', action: 'audit.read', outcome: 'refused', target: '/api/v1/audit' },
    ]);
  });

  it('records the source address the platform saw, never X-Forwarded-For', async () => {
    const job = (await h.call('POST', '/api/v1/jobs', { body: { name: 'sourced', command: 'echo' }, headers: admin }))
      .body;
    const headers = { ...operate, 'X-Forwarded-For': '198.51.100.66' };
    await h.app.request(
      `/api/v1/jobs/${job.id}/trigger`,
      { method: 'POST', headers },
      { incoming: { socket: { remoteAddress: '192.0.2.10' } } },
    );
    await h.app.request(
      `/api/v1/jobs/${job.id}/trigger`,
      { method: 'POST', headers },
      { event: { requestContext: { http: { sourceIp: '203.0.113.44' } } } },
    );
    const sources = (await rows()).filter((r) => r.action === 'job.trigger').map((r) => r.source);
    expect(sources).toEqual(['192.0.2.10', '203.0.113.44']);
  });
});
