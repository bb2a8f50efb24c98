/**
 * The sign-in limit: 10 failures a minute per source address, then 429 with Retry-After (each refusal audited), in
 * process (the socket's address) and through the API Lambda (API Gateway's requestContext.http.sourceIp; X-Forwarded-For never counts).
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context as LambdaContext } from 'aws-lambda';
import type { LambdaEvent } from 'hono/aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpApiEvent } from '../api/apigw-event';
import { apiHarness, type Harness } from '../api/harness';
import { createTestEnv, type TestEnv } from '../support/env';

const KEY = 'limit-key-6d1f0e';

/** Signs in from `address` (the socket's peer) with `key`: the form page first (for its CSRF cookie), then the post. */
async function signInFrom(h: Harness, address: string, key: string, headers: Record<string, string> = {}) {
  const env = { incoming: { socket: { remoteAddress: address } } };
  const page = await h.app.request('/login', { headers }, env);
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  return h.app.request(
    '/login',
    {
      method: 'POST',
      headers: { ...headers, Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ key, _csrf: csrf }).toString(),
    },
    env,
  );
}

describe('in process', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await apiHarness({ apiKeys: [KEY] });
  });
  afterAll(async () => {
    await h.cleanup();
  });

  it('allows 10 failures a minute per address, then answers 429 with Retry-After, even for the right key', async () => {
    for (let i = 0; i < 10; i++) expect((await signInFrom(h, '192.0.2.1', `wrong-${i}`)).status).toBe(303);
    const limited = await signInFrom(h, '192.0.2.1', KEY);
    expect(limited.status).toBe(429);
    expect((await signInFrom(h, '192.0.2.1', 'wrong-again')).status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.getSetCookie().some((c) => c.startsWith('jobs_session='))).toBe(false);
    expect(await limited.text()).toContain('Too many failed sign-ins');
    // Another address has its own budget, whatever X-Forwarded-For claims.
    const other = await signInFrom(h, '192.0.2.2', KEY, { 'X-Forwarded-For': '192.0.2.99' });
    expect(other.status).toBe(303);
    expect(other.headers.getSetCookie().some((c) => c.startsWith('jobs_session=s2.'))).toBe(true);

    // Once the window is over, the address may try again.
    await h.env.pool.query(`UPDATE sign_in_failures SET window_start = now() - interval '61 seconds'`);
    expect((await signInFrom(h, '192.0.2.1', KEY)).status).toBe(303);

    const { rows } = await h.env.pool.query(
      `SELECT key_name, outcome, source FROM audit_log WHERE action = 'session.sign_in' ORDER BY id`,
    );
    // Every attempt is audited, those the limit refused unread too: 10 wrong keys, then 2 refused by the limit.
    expect(rows.filter((r) => r.outcome === 'refused').map((r) => [r.key_name, r.source])).toEqual(
      Array.from({ length: 12 }, () => ['(unknown)', '192.0.2.1']),
    );
    expect(rows.filter((r) => r.outcome === 'ok').map((r) => [r.key_name, r.source])).toEqual([
      ['key1', '192.0.2.2'],
      ['key1', '192.0.2.1'],
    ]);
    expect(JSON.stringify([rows, h.rec.logs])).not.toContain(KEY);
  });
});

describe('through the API Lambda', () => {
  let env: TestEnv;
  let api: typeof import('../../functions/api');
  const context = {
    functionName: 'ApiHandler',
    awsRequestId: 'req-1',
    getRemainingTimeInMillis: () => 30_000,
  } as unknown as LambdaContext;
  const invoke = async (event: APIGatewayProxyEventV2) =>
    (await api.handler(event as unknown as LambdaEvent, context)) as APIGatewayProxyStructuredResultV2;

  beforeAll(async () => {
    env = await createTestEnv('signinlambda');
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

  /** One sign-in through API Gateway from `sourceIp`, with a forged X-Forwarded-For naming another address. */
  async function signIn(sourceIp: string, key: string) {
    const at = (event: APIGatewayProxyEventV2) => {
      event.requestContext.http.sourceIp = sourceIp;
      return event;
    };
    const forged = { 'x-forwarded-for': `198.51.100.${Math.floor(Math.random() * 200)}, ${sourceIp}` };
    const page = await invoke(at(httpApiEvent({ method: 'GET', path: '/login', headers: forged })));
    const cookie = (page.cookies ?? []).map((c) => c.split(';')[0]).join('; ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body!)![1]!;
    const body = new URLSearchParams({ key, _csrf: csrf }).toString();
    return invoke(
      at(
        httpApiEvent({
          method: 'POST',
          path: '/login',
          headers: { ...forged, cookie, 'content-type': 'application/x-www-form-urlencoded' },
          body,
        }),
      ),
    );
  }

  it('counts failures by the source IP API Gateway saw', async () => {
    for (let i = 0; i < 10; i++) expect((await signIn('203.0.113.50', 'nope')).statusCode).toBe(303);
    const limited = await signIn('203.0.113.50', KEY);
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers?.['retry-after'])).toBeGreaterThan(0);
    const other = await signIn('203.0.113.51', KEY);
    expect(other.statusCode).toBe(303);
    expect((other.cookies ?? []).some((c) => c.startsWith('__Host-jobs_session=s2.'))).toBe(true);
    const { rows } = await env.pool.query(`SELECT source, failures FROM sign_in_failures`);
    expect(rows).toEqual([{ source: '203.0.113.50', failures: 10 }]);
  });
});
