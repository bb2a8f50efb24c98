/**
 * functions/api.ts (owned by the API; tested in depth in test/api) invoked with the recorded API Gateway HTTP API
 * payload 2.0 fixtures, the way the `$default` route delivers them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LambdaEvent } from 'hono/aws-lambda';
import type { APIGatewayProxyEventV2, APIGatewayProxyResult } from 'aws-lambda';
import { FIXTURE_API_KEY, FIXTURE_HOST, httpApiGetJobs, httpApiPostJob, lambdaContext } from '../fixtures/events';
import { lambdaTestEnv, type LambdaTestEnv } from './harness';

let env: LambdaTestEnv;
let api: typeof import('../../functions/api');

const invoke = async (event: APIGatewayProxyEventV2) =>
  (await api.handler(
    event as unknown as LambdaEvent,
    lambdaContext({ functionName: 'ApiHandler', timeoutMs: 30_000 }),
  )) as APIGatewayProxyResult;

beforeAll(async () => {
  env = await lambdaTestEnv('lapi', { API_KEYS: FIXTURE_API_KEY, ALLOWED_HOSTS: FIXTURE_HOST });
  api = await import('../../functions/api');
});
afterAll(async () => {
  await api.closeApi();
  await env.cleanup();
});

describe('api Lambda with API Gateway v2 fixtures', () => {
  it('creates a job from the POST fixture and lists it with the GET fixture', async () => {
    const created = await invoke(httpApiPostJob());
    expect(created.statusCode).toBe(201);
    const job = JSON.parse(created.body);
    expect(job).toMatchObject({
      name: 'nightly-report',
      cron_expr: '0 2 * * *',
      timezone: 'Europe/Berlin',
      lane: 'short',
    });
    expect((await env.store.jobGet(job.id))!.nextRunAt).not.toBeNull();

    const listed = await invoke(httpApiGetJobs());
    expect(listed.statusCode).toBe(200);
    expect(JSON.parse(listed.body).data.map((j: { id: string }) => j.id)).toEqual([job.id]);
  });

  it('reads a base64-encoded body as API Gateway sends binary content types', async () => {
    const created = await invoke(httpApiPostJob({ body: { name: 'encoded', command: 'true' }, base64: true }));
    expect(created.statusCode).toBe(201);
    expect(JSON.parse(created.body)).toMatchObject({ name: 'encoded', command: 'true' });
  });

  it('refuses the fixtures without a key', async () => {
    expect((await invoke(httpApiGetJobs({ apiKey: null }))).statusCode).toBe(401);
    expect((await invoke(httpApiPostJob({ apiKey: 'wrong' }))).statusCode).toBe(401);
  });
});
