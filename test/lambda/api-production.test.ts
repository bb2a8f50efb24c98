/**
 * functions/api.ts as it runs on AWS, with API Gateway v2 events: the transitions a request makes reach EventBridge
 * (the local PutEvents server) before its response resolves, a page of large rows stays far below Lambda's 6 MB
 * response limit, and list rows leave payload and output to GET /executions/{id}.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LambdaEvent } from 'hono/aws-lambda';
import type { APIGatewayProxyEventV2, APIGatewayProxyResult } from 'aws-lambda';
import { FIXTURE_API_KEY, FIXTURE_HOST, lambdaContext } from '../fixtures/events';
import { APIGW_HOST, httpApiEvent } from '../api/apigw-event';
import { lambdaTestEnv, type LambdaTestEnv } from './harness';
import { deadEndpoint, startPutEventsServer, type PutEventsServer } from './put-events-server';

/** Lambda refuses a synchronous response (the whole result object) above 6 MB. */
const LAMBDA_RESPONSE_LIMIT = 6 * 1024 * 1024;
const KIB64 = 64 * 1024;

let env: LambdaTestEnv;
let bus: PutEventsServer;
let api: typeof import('../../functions/api');

const auth = { authorization: `Bearer ${FIXTURE_API_KEY}`, 'content-type': 'application/json' };
const invoke = async (event: APIGatewayProxyEventV2) =>
  (await api.handler(
    event as unknown as LambdaEvent,
    lambdaContext({ functionName: 'ApiHandler', timeoutMs: 25_000 }),
  )) as APIGatewayProxyResult;
const get = (path: string, query = '') => invoke(httpApiEvent({ method: 'GET', path, query, headers: auth }));
const post = (path: string, body?: unknown) =>
  invoke(
    httpApiEvent({ method: 'POST', path, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) }),
  );
const transitions = () =>
  bus.delivered.filter((e) => e.DetailType === 'execution.transition').map((e) => JSON.parse(e.Detail!));

beforeAll(async () => {
  bus = await startPutEventsServer();
  env = await lambdaTestEnv('lapiprod', {
    ...bus.env(),
    API_KEYS: FIXTURE_API_KEY,
    ALLOWED_HOSTS: `${FIXTURE_HOST},${APIGW_HOST}`,
    EVENT_BUS_NAME: 'jobs-test-bus',
    EVENT_TRANSITIONS: 'all',
  });
  api = await import('../../functions/api');
});
afterEach(() => {
  bus.delayMs = 0;
  bus.failEntry = null;
});
afterAll(async () => {
  await api.closeApi();
  await env.cleanup();
  await bus.close();
});

describe('API Lambda and EventBridge', () => {
  it('hands the transitions of trigger, cancel and replay to EventBridge before the response resolves', async () => {
    const job = await env.job({ command: 'true' });
    // A slow EventBridge: without the flush, the response would be back long before the events arrive.
    bus.delayMs = 300;
    const triggered = await post(`/api/v1/jobs/${job.id}/trigger`, {});
    expect(triggered.statusCode).toBe(201);
    const id = JSON.parse(triggered.body).id as string;
    expect(transitions()).toContainEqual(
      expect.objectContaining({ execution_id: id, from: null, to: 'queued', trigger: 'manual' }),
    );

    const cancelled = await post(`/api/v1/executions/${id}/cancel`);
    expect(cancelled.statusCode).toBe(200);
    expect(transitions()).toContainEqual(
      expect.objectContaining({ execution_id: id, from: 'queued', to: 'cancelled' }),
    );

    await env.pool.query(`UPDATE executions SET status = 'dead', finished_at = now() WHERE id = $1`, [id]);
    const replayed = await post(`/api/v1/executions/${id}/replay`);
    expect(replayed.statusCode).toBe(201);
    const replay = JSON.parse(replayed.body).id as string;
    expect(transitions()).toContainEqual(
      expect.objectContaining({ execution_id: replay, from: null, to: 'queued', trigger: 'replay' }),
    );
  });

  it('answers within its bound when EventBridge cannot be reached', async () => {
    await env.setEnv({ AWS_ENDPOINT_URL_EVENTBRIDGE: await deadEndpoint() });
    try {
      const job = await env.job({ command: 'true' });
      const started = Date.now();
      const triggered = await post(`/api/v1/jobs/${job.id}/trigger`, {});
      expect(triggered.statusCode).toBe(201);
      expect(Date.now() - started).toBeLessThan(api.EVENTS_FLUSH_MS + 1500);
    } finally {
      await env.setEnv(bus.env());
    }
  });
});

describe('API Lambda responses stay under 6 MB', () => {
  it('lists 200 executions with 64 KiB outputs and payloads without either, far below the limit', async () => {
    const job = await env.job({ command: 'true' });
    await env.pool.query(
      `INSERT INTO executions (job_id, trigger, status, lane, priority, scheduled_for, queued_at, started_at, finished_at,
                               payload, output, error, exit_code, duration_ms)
       SELECT $1, 'manual', 'failed', 'short', 0, now(), now(), now(), now(),
              to_jsonb(repeat('p', $2::int - 8)), repeat(E'line\\n', $2::int / 5), repeat('e', 10000), 1, 5
       FROM generate_series(1, 200)`,
      [job.id, KIB64],
    );
    const res = await get('/api/v1/executions', `job_id=${job.id}&limit=200`);
    expect(res.statusCode).toBe(200);
    expect(JSON.stringify(res).length).toBeLessThan(LAMBDA_RESPONSE_LIMIT / 4);
    const page = JSON.parse(res.body) as { data: Record<string, unknown>[]; next_cursor: string | null };
    expect(page.data).toHaveLength(200);
    expect(page.next_cursor).toBeNull();
    for (const row of page.data) {
      expect(row).not.toHaveProperty('payload');
      expect(row).not.toHaveProperty('output');
      expect(String(row.error)).toMatch(/^e{2048}… \[truncated\]$/);
    }
    // One execution still has all of it.
    const one = JSON.parse((await get(`/api/v1/executions/${page.data[0]!.id}`)).body);
    expect(one.output).toHaveLength(KIB64 - (KIB64 % 5));
    expect(one.payload).toHaveLength(KIB64 - 8);
    expect(one.error).toHaveLength(10_000);
    // The job's own list is the same list.
    const byJob = JSON.parse((await get(`/api/v1/jobs/${job.id}/executions`, 'limit=200')).body);
    expect(byJob.data).toHaveLength(200);
    expect(byJob.data[0]).not.toHaveProperty('output');
  });

  it('caps a page of jobs with 64 KiB payloads at 1 MiB, and the cursor walks every job exactly once', async () => {
    const payload = 'j'.repeat(KIB64 - 8);
    for (let i = 0; i < 40; i++) await env.job({ name: `big-${i}`, command: 'true', payload });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get('/api/v1/jobs', `limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      expect(Buffer.byteLength(res.body)).toBeLessThanOrEqual(1024 * 1024 + 1024);
      const page = JSON.parse(res.body) as { data: { id: string; name: string }[]; next_cursor: string | null };
      expect(page.data.length).toBeGreaterThan(0);
      seen.push(...page.data.filter((j) => j.name.startsWith('big-')).map((j) => j.name));
      cursor = page.next_cursor;
      pages++;
    } while (cursor && pages < 50);
    expect(pages).toBeGreaterThan(1);
    expect(seen.sort()).toEqual(Array.from({ length: 40 }, (_, i) => `big-${i}`).sort());
  });
});
