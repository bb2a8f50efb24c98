/** The API Lambda handler (functions/api.ts) driven with API Gateway v2 events, against this test's schema. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayProxyEventV2, Context as LambdaContext } from 'aws-lambda';
import type { LambdaEvent } from 'hono/aws-lambda';
import { createTestEnv, type TestEnv } from '../support/env';
import { httpApiEvent } from './apigw-event';

let env: TestEnv;
let api: typeof import('../../functions/api');

const lambdaContext = {
  functionName: 'ApiHandler',
  awsRequestId: 'req-1',
  getRemainingTimeInMillis: () => 30_000,
} as unknown as LambdaContext;

/** Real v2 events omit `body` when there is none; hono's event type says null, so cast once here. */
const invoke = (event: APIGatewayProxyEventV2, context: LambdaContext) =>
  api.handler(event as unknown as LambdaEvent, context);

beforeAll(async () => {
  env = await createTestEnv('lambda');
  // The handler reads its configuration from the environment on first use, like a Lambda container does.
  Object.assign(process.env, env.childEnv, {
    API_KEYS: 'lambda-key-0123456789',
    ALLOWED_HOSTS: 'abc123.execute-api.eu-west-1.amazonaws.com',
    LOG_LEVEL: 'silent',
  });
  api = await import('../../functions/api');
});
afterAll(async () => {
  await api.closeApi();
  await env.cleanup();
});

describe('functions/api.ts handler', () => {
  it('answers /healthz without a key', async () => {
    const res = await invoke(httpApiEvent({ method: 'GET', path: '/healthz' }), lambdaContext);
    expect(res.statusCode).toBe(200);
    const queue =
      env.backend === 'redis'
        ? { queue: 'ok', queue_backend: 'redis', redis: 'ok' }
        : { queue: 'ok', queue_backend: 'postgres' };
    expect(JSON.parse(res.body!)).toEqual({ status: 'ok', postgres: 'ok', ...queue });
  });

  it('creates and lists jobs with a key, and refuses without one', async () => {
    const auth = { authorization: 'Bearer lambda-key-0123456789', 'content-type': 'application/json' };
    const created = await invoke(
      httpApiEvent({
        method: 'POST',
        path: '/api/v1/jobs',
        headers: auth,
        body: '{"name":"from-lambda","cron_expr":"@hourly","command":"true"}',
      }),
      lambdaContext,
    );
    expect(created.statusCode).toBe(201);
    expect(JSON.parse(created.body!)).toMatchObject({ name: 'from-lambda', cron_expr: '@hourly' });
    expect(created.headers?.['x-request-id']).toBeTruthy();

    const listed = await invoke(
      httpApiEvent({ method: 'GET', path: '/api/v1/jobs', query: 'limit=1', headers: auth }),
      lambdaContext,
    );
    expect(listed.statusCode).toBe(200);
    expect(JSON.parse(listed.body!).data).toHaveLength(1);

    const refused = await invoke(httpApiEvent({ method: 'GET', path: '/api/v1/jobs' }), lambdaContext);
    expect(refused.statusCode).toBe(401);
  });
});
