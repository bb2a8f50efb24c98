/** While PostgreSQL is unreachable the API says so (503 with Retry-After), instead of reporting a bug (500). */
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { createApp } from '@jobs/api';
import { createStore } from '@jobs/store';
import { createTestEnv, recorder, type TestEnv } from '../support/env';

let env: TestEnv;
let pool: pg.Pool;
beforeAll(async () => {
  env = await createTestEnv('unavailable');
  // Nothing listens on port 1: every query fails to connect.
  pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres', connectionTimeoutMillis: 500 });
  pool.on('error', () => undefined);
});
afterAll(async () => {
  await pool.end();
  await env.cleanup();
});

it('answers 503 with Retry-After when the database cannot be reached', async () => {
  const rec = recorder();
  const app = createApp({
    store: createStore(pool),
    queue: env.queue,
    clock: { now: () => new Date() },
    sink: rec.sink,
    logger: rec.logger,
    apiKeys: [],
    bodyLimitBytes: 262144,
    shortLaneMaxTimeoutMs: 600_000,
    workerActiveWithinMs: 60_000,
  });
  for (const [method, path, body] of [
    ['GET', '/api/v1/jobs', undefined],
    ['POST', '/api/v1/jobs', JSON.stringify({ name: 'x', command: 'true' })],
    ['POST', '/api/v1/jobs/1/trigger', '{}'],
  ] as const) {
    const res = await app.request(path, { method, body, headers: body ? { 'content-type': 'application/json' } : {} });
    expect(res.status, `${method} ${path}`).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unavailable');
  }
  // Not reported as a bug: no unhandled-error entry, one unavailable warning per request.
  expect(rec.logs.some((l) => (l.obj as { event?: string }).event === 'http.unhandled_error')).toBe(false);
  expect(rec.logs.filter((l) => (l.obj as { event?: string }).event === 'http.unavailable')).toHaveLength(3);
});
