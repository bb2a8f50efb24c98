/**
 * The HTTP adapter against a real local server: what it sends (payload body, identity headers, a signature a
 * receiver verifies), what it records, and the SSRF guard (literal and resolved addresses, the allow list, redirects).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAddressPolicy, LazyAbort, type HttpTarget, type StartedExecution } from '@jobs/core';
import { ADDRESS_REFUSED, createRunner, guardedLookup, verifySignature, type RunnerOptions } from '@jobs/runner';
import type { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { startReceiver, type Receiver } from './receiver';

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());
beforeEach(() => {
  receiver.requests.length = 0;
  receiver.respond = () => undefined;
});

function started(
  http: Partial<HttpTarget> & { url: string },
  fields: Partial<StartedExecution> = {},
): StartedExecution {
  return {
    id: '42',
    token: 't',
    jobId: '7',
    attempt: 2,
    rootId: '40',
    trigger: 'retry',
    lane: 'short',
    priority: 0,
    scheduledFor: new Date(),
    payload: { report: 'nightly', n: 1 },
    command: null,
    handler: null,
    http: { method: 'POST', headers: {}, ...http },
    lambda: null,
    timeoutMs: 5000,
    maxRetries: 3,
    backoff: { baseMs: 0, factor: 2, maxMs: 1000, jitter: 'none' },
    overlap: 'allow',
    flowKey: null,
    jobVersion: 1,
    timezone: 'UTC',
    delivery: 1,
    ...fields,
  };
}

const loopbackAllowed = createAddressPolicy({ cidrs: ['127.0.0.0/8', '::1/128'] });
const run = (execution: StartedExecution, options: RunnerOptions['http'] = { policy: loopbackAllowed }) =>
  createRunner({ http: options }).run(execution, new LazyAbort());

describe('HTTP target: the request', () => {
  it('posts the payload as JSON with the identity headers and a signature the receiver verifies', async () => {
    const result = await run(started({ url: receiver.url(), headers: { 'X-Tenant': 'acme' } }), {
      policy: loopbackAllowed,
      signingSecrets: ['new-secret', 'old-secret'],
    });
    expect(result).toMatchObject({ ok: true, error: null });
    const [req] = receiver.requests;
    expect(req).toMatchObject({ method: 'POST', path: '/hook', body: '{"report":"nightly","n":1}' });
    expect(req!.headers).toMatchObject({
      'content-type': 'application/json',
      'x-tenant': 'acme',
      'jobs-job-id': '7',
      'jobs-execution-id': '42',
      'jobs-attempt': '2',
      'jobs-delivery': '1',
      'idempotency-key': 'jobs-40',
    });
    const signature = req!.headers['jobs-signature'] as string;
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    // The receiver knows either secret (rotation); the first one signed.
    expect(verifySignature(signature, req!.body, ['new-secret'])).toBe(true);
    expect(verifySignature(signature, req!.body, ['old-secret', 'new-secret'])).toBe(true);
    expect(verifySignature(signature, req!.body, ['old-secret'])).toBe(false);
    expect(verifySignature(signature, `${req!.body} `, ['new-secret'])).toBe(false);
    expect(result.output).toBe('HTTP 200 OK\ncontent-type: text/plain\n\nok');
  });

  it('says which delivery of the attempt a request is: the same attempt sent again after a shutdown counts up', async () => {
    // A target's own Jobs-Delivery (a row from before the name was reserved) is replaced, never sent beside it.
    const target = { url: receiver.url(), headers: { 'Jobs-Delivery': 'theirs' } };
    for (const delivery of [1, 3]) expect(await run(started(target, { delivery }))).toMatchObject({ ok: true });
    expect(receiver.requests.map((r) => [r.headers['jobs-attempt'], r.headers['jobs-delivery']])).toEqual([
      ['2', '1'],
      ['2', '3'],
    ]);
  });

  it("signs each body on its own, also within one second through one runner; its own headers replace the target's", async () => {
    const runner = createRunner({ http: { policy: loopbackAllowed, signingSecrets: ['s'] } });
    const target = {
      url: receiver.url(),
      headers: { 'Idempotency-Key': 'theirs', 'Jobs-Signature': 'theirs', 'X-Tenant': 'acme' },
    };
    for (const payload of [{ n: 1 }, { n: 2 }, { n: 1 }]) {
      const execution = started(target, { payload });
      const result = await runner.run(
        { ...execution, http: { ...execution.http!, ...target, method: 'POST' } },
        new LazyAbort(),
      );
      expect(result).toMatchObject({ ok: true });
    }
    expect(receiver.requests.map((r) => r.body)).toEqual(['{"n":1}', '{"n":2}', '{"n":1}']);
    for (const req of receiver.requests) {
      expect(verifySignature(req.headers['jobs-signature'] as string, req.body, ['s'])).toBe(true);
      expect(req.headers).toMatchObject({ 'idempotency-key': 'jobs-40', 'x-tenant': 'acme' });
    }
  });

  it('sends a string body as is and a JSON body as JSON; GET sends none; unsigned without a secret', async () => {
    await run(started({ url: receiver.url(), body: 'plain text' }));
    await run(started({ url: receiver.url(), method: 'PUT', body: { fixed: true } }));
    await run(started({ url: receiver.url('/q?x=1'), method: 'GET' }));
    expect(receiver.requests.map((r) => [r.method, r.headers['content-type'], r.body])).toEqual([
      ['POST', 'text/plain; charset=utf-8', 'plain text'],
      ['PUT', 'application/json', '{"fixed":true}'],
      ['GET', undefined, ''],
    ]);
    expect(receiver.requests.every((r) => r.headers['jobs-signature'] === undefined)).toBe(true);
  });

  it('sends no body (not the literal null) for a target with no payload and no body of its own', async () => {
    await run(started({ url: receiver.url() }, { payload: null }));
    await run(started({ url: receiver.url(), headers: { 'Content-Type': 'application/x-custom' } }, { payload: null }));
    await run(started({ url: receiver.url(), method: 'PUT' }, { payload: { n: 1 } }));
    expect(
      receiver.requests.map((r) => [r.method, r.headers['content-type'], r.headers['content-length'] ?? '0', r.body]),
    ).toEqual([
      ['POST', undefined, '0', ''],
      ['POST', 'application/x-custom', '0', ''],
      ['PUT', 'application/json', '7', '{"n":1}'],
    ]);
  });

  it('caps the response body it records, and stops reading there', async () => {
    receiver.respond = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': 'session=s3cr3t' });
      res.end('x'.repeat(200_000));
      return true;
    };
    const result = await createRunner({ http: { policy: loopbackAllowed }, outputLimit: 1000 }).run(
      started({ url: receiver.url() }),
      new LazyAbort(),
    );
    expect(result.ok).toBe(true);
    expect(result.output.length).toBeLessThan(1200); // the limit, the head/tail cut marker and the note
    expect(result.output).toMatch(/\[response body truncated: the rest was not read\]$/);
    expect(result.output).not.toContain('s3cr3t');
  });

  it('records a 3xx as a final failure: the redirect is not followed', async () => {
    receiver.respond = (req, res) => {
      if (req.path !== '/hook') return;
      res.writeHead(302, { location: receiver.url('/elsewhere') });
      res.end();
      return true;
    };
    const result = await run(started({ url: receiver.url() }));
    expect(result).toMatchObject({ ok: false, final: true });
    expect(result.error).toMatch(
      /^HTTP 302 Found: redirects are not followed \(Location: http:\/\/127\.0\.0\.1:\d+\/elsewhere\)$/,
    );
    expect(receiver.requests.map((r) => r.path)).toEqual(['/hook']);
  });

  it('classifies 408, 429 and 5xx as retryable (with Retry-After), other 4xx as final', async () => {
    const answers: [number, Record<string, string>][] = [
      [503, {}],
      [429, { 'retry-after': '3' }],
      [408, {}],
      [404, {}],
      [400, {}],
      [401, {}],
    ];
    receiver.respond = (_req, res, n) => {
      res.writeHead(answers[n]![0], answers[n]![1]);
      res.end('nope');
      return true;
    };
    const results = [];
    for (const _ of answers) results.push(await run(started({ url: receiver.url() })));
    expect(results.map((r) => [r.ok, r.final, r.retryAfterMs ?? null, r.error])).toEqual([
      [false, false, null, 'HTTP 503 Service Unavailable'],
      [false, false, 3000, 'HTTP 429 Too Many Requests'],
      [false, false, null, 'HTTP 408 Request Timeout'],
      [false, true, null, 'HTTP 404 Not Found (final: a 4xx other than 408 and 429 is not retried)'],
      [false, true, null, 'HTTP 400 Bad Request (final: a 4xx other than 408 and 429 is not retried)'],
      [false, true, null, 'HTTP 401 Unauthorized (final: a 4xx other than 408 and 429 is not retried)'],
    ]);
    expect(results[1]!.output).toContain('retry-after: 3');
  });

  it('reads a Retry-After HTTP date', async () => {
    receiver.respond = (_req, res) => {
      res.writeHead(503, { 'retry-after': new Date(Date.now() + 10_000).toUTCString() });
      res.end();
      return true;
    };
    const result = await run(started({ url: receiver.url() }));
    expect(result.retryAfterMs).toBeGreaterThan(8_000);
    expect(result.retryAfterMs).toBeLessThanOrEqual(10_000);
  });

  it('fails a refused connection as retryable', async () => {
    const { deadEndpoint } = await import('../lambda/put-events-server');
    const result = await run(started({ url: `${await deadEndpoint()}/hook` }));
    expect(result).toMatchObject({ ok: false, final: false });
    expect(result.error).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/hook: connection refused/);
  });

  it('stops at the abort signal (the worker aborts at the timeout)', async () => {
    receiver.respond = () => new Promise<boolean>(() => undefined); // never answers
    const abort = new LazyAbort();
    setTimeout(() => abort.abort('timeout'), 200);
    const before = Date.now();
    const result = await createRunner({ http: { policy: loopbackAllowed } }).run(
      started({ url: receiver.url() }),
      abort,
    );
    expect(Date.now() - before).toBeLessThan(2000);
    expect(result).toMatchObject({ ok: false, final: false, error: 'aborted (timeout)' });
  });
});

describe('HTTP target: the address guard', () => {
  const denyAll = { policy: createAddressPolicy() };

  it('refuses loopback literals (127.0.0.2, [::1], IPv4-mapped) as final, without connecting', async () => {
    for (const host of ['127.0.0.2', '[::1]', '[::ffff:127.0.0.1]']) {
      const result = await run(started({ url: receiver.url('/hook', host) }), denyAll);
      expect(result).toMatchObject({ ok: false, final: true });
      expect(result.error).toMatch(
        /^refused: .* is a loopback address; HTTP targets may only reach public addresses unless HTTP_TARGET_ALLOW lists it$/,
      );
    }
    expect(receiver.requests).toEqual([]);
  });

  it('refuses IPv4-compatible IPv6 literals (::/96) as final, without connecting', async () => {
    for (const host of ['[::127.0.0.1]', '[::a9fe:a9fe]', '[::7f00:1]']) {
      const result = await run(started({ url: receiver.url('/hook', host) }), denyAll);
      expect(result, host).toMatchObject({ ok: false, final: true });
      expect(result.error, host).toMatch(/^refused: ::[0-9a-f:]+ is an IPv4-compatible IPv6 address \(::\/96/);
    }
    // Allowing 127.0.0.0/8 does not open its IPv4-compatible spelling.
    const result = await run(started({ url: receiver.url('/hook', '[::127.0.0.1]') }), { policy: loopbackAllowed });
    expect(result).toMatchObject({ ok: false, final: true });
    expect(receiver.requests).toEqual([]);
  });

  it('refuses a name that resolves to an IPv4-compatible IPv6 address', async () => {
    const resolve = ((_host: string, _options: unknown, callback: (e: null, a: LookupAddress[]) => void) =>
      callback(null, [{ address: '::a9fe:a9fe', family: 6 }])) as unknown as typeof dnsLookup;
    const refused = await new Promise<(Error & { code?: string }) | null>((done) =>
      guardedLookup(createAddressPolicy(), resolve)('metadata.example', { all: true }, (error) => done(error)),
    );
    expect(refused?.code).toBe(ADDRESS_REFUSED);
    expect(refused?.message).toMatch(
      /^metadata\.example resolves to ::a9fe:a9fe is an IPv4-compatible .* 169\.254\.169\.254/,
    );
  });

  it('refuses a name that resolves to loopback (checked on the resolved addresses)', async () => {
    const result = await run(started({ url: receiver.url('/hook', 'localhost') }), denyAll);
    expect(result).toMatchObject({ ok: false, final: true });
    expect(result.error).toMatch(/^refused: localhost is a loopback name: 127\.0\.0\.1 is a loopback address/);
    expect(receiver.requests).toEqual([]);
  });

  it('allows them when HTTP_TARGET_ALLOW lists the CIDR or the host name', async () => {
    const byCidr = { policy: createAddressPolicy({ cidrs: ['127.0.0.0/8', '::1'] }) };
    expect(await run(started({ url: receiver.url('/a', '127.0.0.2') }), byCidr)).toMatchObject({ ok: true });
    expect(await run(started({ url: receiver.url('/b', '[::1]') }), byCidr)).toMatchObject({ ok: true });
    expect(await run(started({ url: receiver.url('/c', 'localhost') }), byCidr)).toMatchObject({ ok: true });
    const byName = { policy: createAddressPolicy({ hosts: ['localhost'] }) };
    expect(await run(started({ url: receiver.url('/d', 'localhost') }), byName)).toMatchObject({ ok: true });
    // Listing a name allows that name only, not the addresses it resolves to.
    expect(await run(started({ url: receiver.url('/e', '127.0.0.1') }), byName)).toMatchObject({
      ok: false,
      final: true,
    });
    expect(receiver.requests.map((r) => r.path)).toEqual(['/a', '/b', '/c', '/d']);
  });
});

describe('the receiver example of docs/targets.md', () => {
  it('verifies what the adapter signs, with any secret of a rotation, and refuses a changed body', async () => {
    const { readFileSync } = await import('node:fs');
    const crypto = await import('node:crypto');
    const page = readFileSync(new URL('../../docs/targets.md', import.meta.url), 'utf8');
    const code = /```js\n(import \{ createHmac, timingSafeEqual \} from 'node:crypto';\n[\s\S]*?)```/.exec(page)![1]!;
    expect(code.trim().split('\n').length).toBeLessThanOrEqual(11);
    const body = code.replace(/^import .*\n/, '').replace('export function verify', 'return function verify');
    const verify = new Function('createHmac', 'timingSafeEqual', body)(crypto.createHmac, crypto.timingSafeEqual);
    await run(started({ url: receiver.url() }), { policy: loopbackAllowed, signingSecrets: ['new', 'old'] });
    const [req] = receiver.requests;
    expect(verify(req!.headers['jobs-signature'], req!.body, ['old', 'new'])).toBe(true);
    expect(verify(req!.headers['jobs-signature'], req!.body, ['old'])).toBe(false);
    expect(verify(req!.headers['jobs-signature'], req!.body.replace('1', '2'), ['new'])).toBe(false);
    expect(verify(undefined, req!.body, ['new'])).toBe(false);
  });
});

describe('HTTP target under tracing', () => {
  it("sends the request span's traceparent and ends the span with the status (method and host only)", async () => {
    const spans: {
      name: string;
      parent: string | null | undefined;
      attributes: Record<string, unknown>;
      ended: (string | null | undefined)[];
    }[] = [];
    const tracing = {
      start(name: string, options: { parent?: string | null; attributes?: Record<string, unknown> } = {}) {
        const span = {
          name,
          parent: options.parent,
          attributes: { ...options.attributes },
          ended: [] as (string | null | undefined)[],
        };
        spans.push(span);
        return {
          traceparent: `00-${'a'.repeat(32)}-${String(spans.length).padStart(16, '0')}-01`,
          setAttributes: (a: Record<string, unknown>) => void Object.assign(span.attributes, a),
          updateName: () => undefined,
          end: (error?: string | null) => void span.ended.push(error),
        };
      },
    };
    const parent = `00-${'b'.repeat(32)}-${'c'.repeat(16)}-01`;
    const result = await createRunner({ http: { policy: loopbackAllowed }, tracing }).run(
      { ...started({ url: receiver.url('/hook?token=secret') }), traceparent: parent },
      new LazyAbort(),
    );
    expect(result.ok).toBe(true);
    const client = spans.find((s) => s.name.startsWith('POST '))!;
    expect(client.name).toBe(`POST 127.0.0.1:${receiver.port}`);
    expect(client.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.response.status_code': 200 });
    expect(JSON.stringify(client)).not.toContain('token=secret');
    expect(client.ended).toEqual([null]);
    expect(receiver.requests[0]!.headers.traceparent).toMatch(/^00-a{32}-\d{16}-01$/);
  });
});
