/**
 * One rule for the data a job carries (its payload, an HTTP target's body) and the secrets it may hold: a read key
 * sees every field whose name suggests a secret masked, as the audit trail records it, in the API (job, job list,
 * versions, execution) and the dashboard (job and execution pages); operate and admin see it in full.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formClient } from '../browser/form-client';
import { bearer, keyOf, ROLE_KEYS } from '../support/role-keys';
import { apiHarness, type Harness } from './harness';

const PASSWORD = 'hunter2-correct-horse';
const TOKEN = 'tok-9f8e7d6c5b4a';
let h: Harness;
let ids: { job: string; http: string; execution: string };

beforeAll(async () => {
  h = await apiHarness({ apiKeys: ROLE_KEYS });
  const admin = bearer('admin');
  const job = await h.call('POST', '/api/v1/jobs', {
    body: {
      name: 'masked',
      command: 'echo hi',
      payload: { user: 'ana', password: PASSWORD, nested: { token: TOKEN } },
    },
    headers: admin,
  });
  expect(job.status).toBe(201);
  const patched = await h.call('PATCH', `/api/v1/jobs/${job.body.id}`, {
    body: { payload: { user: 'ana', password: `${PASSWORD}-2` } },
    headers: admin,
  });
  expect(patched.status).toBe(200);
  const http = await h.call('POST', '/api/v1/jobs', {
    body: { name: 'masked-http', http: { url: 'https://example.com/x', body: { password: PASSWORD, n: 1 } } },
    headers: admin,
  });
  expect(http.status).toBe(201);
  const execution = await h.call('POST', `/api/v1/jobs/${job.body.id}/trigger`, {
    body: { payload: { password: PASSWORD, keep: 'me' } },
    headers: bearer('operate'),
  });
  expect(execution.status).toBe(201);
  ids = { job: job.body.id, http: http.body.id, execution: execution.body.id };
});
afterAll(() => h.cleanup());

const reads = async (role: 'read' | 'operate' | 'admin') => {
  const headers = bearer(role);
  const got = await Promise.all([
    h.call('GET', `/api/v1/jobs/${ids.job}`, { headers }),
    h.call('GET', `/api/v1/jobs/${ids.http}`, { headers }),
    h.call('GET', '/api/v1/jobs', { headers }),
    h.call('GET', `/api/v1/jobs/${ids.job}/versions`, { headers }),
    h.call('GET', `/api/v1/executions/${ids.execution}`, { headers }),
  ]);
  for (const res of got) expect(res.status).toBe(200);
  return got.map((res) => res.body);
};

describe('secret-looking fields of a payload or HTTP body', () => {
  it('are masked for a read key in every API read, as the audit trail records them', async () => {
    const [job, http, list, versions, execution] = await reads('read');
    expect(job.payload).toEqual({ user: 'ana', password: '***' });
    expect(http.http.body).toEqual({ password: '***', n: 1 });
    expect(list.data.find((j: { id: string }) => j.id === ids.job).payload).toEqual({ user: 'ana', password: '***' });
    expect(execution.payload).toEqual({ password: '***', keep: 'me' });
    const payloadChange = versions.data[0].changes.find((c: { field: string }) => c.field === 'payload');
    expect(payloadChange).toEqual({
      field: 'payload',
      old: { user: 'ana', password: '***', nested: { token: '***' } },
      new: { user: 'ana', password: '***' },
    });
    const everything = JSON.stringify([job, http, list, versions, execution]);
    expect(everything).not.toContain(PASSWORD);
    expect(everything).not.toContain(TOKEN);
    // The audit trail keeps the same masked shape.
    const audit = await h.call('GET', `/api/v1/audit?target=job:${ids.job}`, { headers: bearer('admin') });
    expect(JSON.stringify(audit.body)).not.toContain(PASSWORD);
  });

  it('are shown in full to operate and admin keys, who can run and edit the job with them', async () => {
    for (const role of ['operate', 'admin'] as const) {
      const [job, http, , versions, execution] = await reads(role);
      expect(job.payload).toEqual({ user: 'ana', password: `${PASSWORD}-2` });
      expect(http.http.body).toEqual({ password: PASSWORD, n: 1 });
      expect(execution.payload).toEqual({ password: PASSWORD, keep: 'me' });
      expect(JSON.stringify(versions)).toContain(TOKEN);
    }
  });

  it('are masked for a read key on the dashboard job and execution pages, in full for operate', async () => {
    const pages = async (role: 'read' | 'operate') => {
      const b = formClient(h.app);
      expect((await b.signIn(keyOf(role).key)).status).toBe(303);
      const got = await Promise.all(
        [`/jobs/${ids.job}`, `/jobs/${ids.http}`, `/executions/${ids.execution}`].map((p) => b.request('GET', p)),
      );
      for (const page of got) expect(page.status).toBe(200);
      return got.map((page) => page.text).join('\n');
    };
    const read = await pages('read');
    expect(read).not.toContain(PASSWORD);
    expect(read).not.toContain(TOKEN);
    expect(read).toContain('&quot;password&quot;: &quot;***&quot;');
    const operate = await pages('operate');
    expect(operate).toContain(PASSWORD);
    expect(operate).toContain(TOKEN);
  });
});
