/**
 * The dashboard behind API Gateway: the real Lambda handler (functions/api.ts) with HTTP API v2 events, where
 * cookies arrive in `event.cookies`, leave in `result.cookies`, and form bodies come base64-encoded. Over https the
 * cookies are Secure and `__Host-` prefixed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context as LambdaContext } from 'aws-lambda';
import type { LambdaEvent } from 'hono/aws-lambda';
import { createTestEnv, type TestEnv } from '../support/env';
import { httpApiEvent } from '../api/apigw-event';

const KEY = 'lambda-dashboard-key-3c9d';
let env: TestEnv;
let api: typeof import('../../functions/api');

const lambdaContext = {
  functionName: 'ApiHandler',
  awsRequestId: 'req-1',
  getRemainingTimeInMillis: () => 30_000,
} as unknown as LambdaContext;

async function invoke(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  return (await api.handler(event as unknown as LambdaEvent, lambdaContext)) as APIGatewayProxyStructuredResultV2;
}

/** `name=value` of each Set-Cookie, as a browser would send them back in `event.cookies`. */
const pairs = (cookies: string[] | undefined) => (cookies ?? []).map((c) => c.split(';')[0]!);

beforeAll(async () => {
  env = await createTestEnv('dashlambda');
  Object.assign(process.env, env.childEnv, {
    API_KEYS: KEY,
    ALLOWED_HOSTS: 'abc123.execute-api.eu-west-1.amazonaws.com',
    LOG_LEVEL: 'silent',
  });
  api = await import('../../functions/api');
});
afterAll(async () => {
  await api.closeApi();
  await env.cleanup();
});

describe('the dashboard on Lambda', () => {
  it('signs in with Secure __Host- cookies and serves pages with the session', async () => {
    const page = await invoke(httpApiEvent({ method: 'GET', path: '/jobs' }));
    expect(page.statusCode).toBe(303);
    expect(page.headers?.location).toBe('/login?next=%2Fjobs');

    const login = await invoke(httpApiEvent({ method: 'GET', path: '/login', query: 'next=%2Fjobs' }));
    expect(login.statusCode).toBe(200);
    expect(login.cookies).toEqual([
      expect.stringMatching(/^__Host-jobs_form=[^;]+; Max-Age=43200; Path=\/; HttpOnly; Secure; SameSite=Strict$/),
    ]);
    const token = /name="_csrf" value="([^"]+)"/.exec(login.body!)![1]!;

    const form = new URLSearchParams({ key: KEY, _csrf: token, next: '/jobs' }).toString();
    const event = httpApiEvent({
      method: 'POST',
      path: '/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: Buffer.from(form).toString('base64'),
    });
    const signedIn = await invoke({ ...event, isBase64Encoded: true, cookies: pairs(login.cookies) });
    expect(signedIn.statusCode).toBe(303);
    expect(signedIn.headers?.location).toBe('/jobs');
    const session = signedIn.cookies?.find((c) => c.startsWith('__Host-jobs_session='));
    expect(session).toMatch(/; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
    expect(session).not.toContain(KEY);

    const jobs = await invoke({ ...httpApiEvent({ method: 'GET', path: '/jobs' }), cookies: pairs([session!]) });
    expect(jobs.statusCode).toBe(200);
    expect(jobs.headers?.['content-type']).toMatch(/^text\/html/);
    expect(jobs.body).toContain('<h1>Jobs</h1>');

    // The plain-http cookie name is not accepted over https (it could have been planted without the prefix rules).
    const value = session!.split(';')[0]!.replace('__Host-', '');
    const planted = await invoke({ ...httpApiEvent({ method: 'GET', path: '/jobs' }), cookies: [value] });
    expect(planted.statusCode).toBe(303);
  });
});
