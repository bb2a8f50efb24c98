import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '@jobs/api';
import { createStore } from '@jobs/store';
import pg from 'pg';
import { schemaUrl } from '../support/env';
import { apiHarness, type Harness } from './harness';

let h: Harness;
afterEach(async () => {
  await h.cleanup();
});

describe('authentication', () => {
  const KEY = 'k3y-0ne';
  beforeEach(async () => {
    // Its many wrong keys come from one (unknown) address: test/api/auth-limit.test.ts has the limit they would meet.
    h = await apiHarness({ apiKeys: [KEY, 'second-key'], authFailureLimit: 1_000_000 });
  });

  it('requires a valid bearer key on every /api/v1 route', async () => {
    const routes = [
      ['GET', '/api/v1/jobs'],
      ['POST', '/api/v1/jobs'],
      ['GET', '/api/v1/jobs/1'],
      ['POST', '/api/v1/jobs/1/trigger'],
      ['GET', '/api/v1/executions'],
      ['GET', '/api/v1/workers'],
      ['GET', '/api/v1/stats'],
      ['GET', '/api/v1/schedules/preview?cron_expr=@daily'],
      ['GET', '/api/v1/openapi.json'],
      ['GET', '/api/v1/no-such-route'],
    ] as const;
    for (const [method, path] of routes) {
      for (const authorization of [
        undefined,
        'Bearer wrong',
        `Basic ${KEY}`,
        'Bearer',
        `Bearer ${KEY}x`,
        `Bearer ${KEY.slice(0, -1)}`,
      ]) {
        const res = await h.call(method, path, { headers: authorization ? { Authorization: authorization } : {} });
        expect(res.status, `${method} ${path} ${authorization}`).toBe(401);
        expect(res.body.error.code).toBe('unauthorized');
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
    }
    const missing = await h.call('GET', '/api/v1/jobs');
    expect(missing.body.error.message).toMatch(/missing API key/);
    const wrong = await h.call('GET', '/api/v1/jobs', { headers: { Authorization: 'Bearer nope' } });
    expect(wrong.body.error.message).toBe('invalid API key');
  });

  it('accepts any configured key, case-insensitive scheme', async () => {
    for (const authorization of [`Bearer ${KEY}`, 'Bearer second-key', `bearer ${KEY}`]) {
      const res = await h.call('GET', '/api/v1/jobs', { headers: { Authorization: authorization } });
      expect(res.status, authorization).toBe(200);
    }
    const created = await h.call('POST', '/api/v1/jobs', {
      body: { name: 'authed', command: 'true' },
      headers: { Authorization: `Bearer ${KEY}` },
    });
    expect(created.status).toBe(201);
  });

  it('checks the key before reading the body', async () => {
    const res = await h.call('POST', '/api/v1/jobs', {
      raw: 'x'.repeat(1_000_000),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(401);
  });

  it('never logs the key or the Authorization header', async () => {
    await h.call('GET', '/api/v1/jobs', { headers: { Authorization: `Bearer ${KEY}` } });
    await h.call('GET', '/api/v1/jobs', { headers: { Authorization: 'Bearer guessed-key' } });
    const logged = JSON.stringify(h.rec.logs);
    expect(logged).not.toContain(KEY);
    expect(logged).not.toContain('guessed-key');
    expect(logged.toLowerCase()).not.toContain('authorization');
  });
});

describe('request log and request ids', () => {
  beforeEach(async () => {
    h = await apiHarness();
  });

  it('writes one structured line per request and echoes a given X-Request-Id', async () => {
    const res = await h.call('GET', '/api/v1/jobs?limit=5', { headers: { 'X-Request-Id': 'req-123' } });
    expect(res.headers.get('x-request-id')).toBe('req-123');
    const lines = h.rec.logs.filter((l) => (l.obj as any).event === 'http.request');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.obj).toEqual({
      event: 'http.request',
      method: 'GET',
      path: '/api/v1/jobs',
      status: 200,
      duration_ms: expect.any(Number),
      request_id: 'req-123',
      key: 'anonymous',
    });
  });

  it('generates a request id when none (or an unsafe one) is given, also on errors', async () => {
    const plain = await h.call('GET', '/api/v1/jobs/999');
    expect(plain.status).toBe(404);
    expect(plain.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const unsafe = await h.call('GET', '/healthz', { headers: { 'X-Request-Id': 'bad id\twith spaces' } });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const statuses = h.rec.logs.map((l) => (l.obj as any).status);
    expect(statuses).toEqual([404, 200]);
  });
});

describe('errors', () => {
  beforeEach(async () => {
    h = await apiHarness({ bodyLimitBytes: 2048 });
  });

  it('answers unknown routes with a JSON 404', async () => {
    for (const path of ['/nope', '/api/v1', '/api/v1/nothing', '/api/v2/jobs', '/api/v1/jobs/1/unknown']) {
      const res = await h.call('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
  });

  it('answers a wrong method with a JSON 405 and an Allow header', async () => {
    const res = await h.call('PUT', '/api/v1/jobs/1');
    expect(res.status).toBe(405);
    expect(res.body.error.code).toBe('method_not_allowed');
    expect(res.headers.get('allow')).toContain('DELETE');
    expect((await h.call('GET', '/api/v1/jobs/1/trigger')).status).toBe(405);
    expect((await h.call('DELETE', '/api/v1/jobs')).status).toBe(405);
  });

  it('answers 413 for a body over the limit, with or without Content-Length', async () => {
    const body = JSON.stringify({ name: 'big', command: 'x'.repeat(3000) });
    const sized = await h.call('POST', '/api/v1/jobs', {
      raw: body,
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) },
    });
    expect(sized.status).toBe(413);
    expect(sized.body.error).toEqual({ code: 'payload_too_large', message: 'request body exceeds 2048 bytes' });
    const streamed = await h.call('POST', '/api/v1/jobs', {
      raw: body,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(streamed.status).toBe(413);
    const trigger = await h.call('POST', '/api/v1/jobs/1/trigger', { body: { payload: 'x'.repeat(3000) } });
    expect(trigger.status).toBe(413);
    const small = await h.call('POST', '/api/v1/jobs', { body: { name: 'small', command: 'true' } });
    expect(small.status).toBe(201);
  });

  it('turns an unexpected failure into a 500 that logs the error but does not leak it', async () => {
    const pool = new pg.Pool({ connectionString: schemaUrl(h.env.schema), max: 1 });
    await pool.end();
    const app = createApp({ ...h.deps, store: createStore(pool) });
    const res = await app.request('/api/v1/jobs', { headers: { 'X-Request-Id': 'boom-1' } });
    expect(res.status).toBe(500);
    const body = (await res.json()) as any;
    expect(body.error.code).toBe('internal');
    expect(body.error.message).toContain('boom-1');
    expect(body.error.message).not.toMatch(/pool/i);
    const logged = h.rec.logs.find((l) => (l.obj as any).event === 'http.unhandled_error');
    expect(logged?.level).toBe('error');
    expect(logged?.obj).toMatchObject({ request_id: 'boom-1', err: { message: expect.stringMatching(/pool/i) } });
  });
});
