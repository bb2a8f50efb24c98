/**
 * HTTP and Lambda targets through the API and the dashboard: exactly one target, the guard's 400 for a literal
 * denied address, the target in words, and header secrets masked in every response, page, log line and event
 * (while the stored row keeps them, and the receiver gets them).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAddressPolicy, MASKED, maskHeaders } from '@jobs/core';
import { apiHarness, type Harness } from '../api/harness';
import { formClient } from '../browser/form-client';
import { engine } from '../support/engine';
import { eventually } from '../support/env';
import { startReceiver } from './receiver';

let h: Harness;
beforeEach(async () => {
  h = await apiHarness();
});
afterEach(() => h.cleanup());

const SECRETS = {
  Authorization: 'Bearer sk_live_abc123',
  'X-Api-Key': 'key-456',
  'X-Auth-Token': 'tok-789',
  Cookie: 'sid=cookie-000',
};
const SECRET_VALUES = Object.values(SECRETS).flatMap((v) => [v, ...v.split(/[ =]/).filter((p) => p.length > 5)]);
const noSecret = (text: string, where: string) => {
  for (const secret of SECRET_VALUES) expect(text, `${where} shows ${secret}`).not.toContain(secret);
};

describe('the one masking function', () => {
  it('masks authorization, cookies, *-key, *token*, *secret* and keeps the rest', () => {
    expect(
      maskHeaders({
        ...SECRETS,
        'Proxy-Authorization': 'p',
        'X-Client-Secret': 's',
        Apikey: 'a',
        'X-Tenant': 'acme',
        Accept: 'application/json',
      }),
    ).toEqual({
      Authorization: MASKED,
      'X-Api-Key': MASKED,
      'X-Auth-Token': MASKED,
      Cookie: MASKED,
      'Proxy-Authorization': MASKED,
      'X-Client-Secret': MASKED,
      Apikey: MASKED,
      'X-Tenant': 'acme',
      Accept: 'application/json',
    });
  });
});

describe('creating targets', () => {
  it('shows an HTTP job with its target in words and its secrets masked, and stores them in full', async () => {
    const job = await h.createJob({
      command: undefined,
      http: { url: 'https://api.example.com/hooks/nightly', headers: { ...SECRETS, 'X-Tenant': 'acme' } },
    });
    expect(job).toMatchObject({
      command: null,
      handler: null,
      lambda: null,
      target: 'POST https://api.example.com/hooks/nightly',
      http: {
        url: 'https://api.example.com/hooks/nightly',
        method: 'POST',
        headers: {
          Authorization: MASKED,
          'X-Api-Key': MASKED,
          'X-Auth-Token': MASKED,
          Cookie: MASKED,
          'X-Tenant': 'acme',
        },
      },
    });
    expect(job.http).not.toHaveProperty('body');
    const { rows } = await h.env.pool.query('SELECT http FROM jobs WHERE id = $1', [job.id]);
    expect(rows[0].http.headers).toEqual({ ...SECRETS, 'X-Tenant': 'acme' });

    for (const path of [`/api/v1/jobs/${job.id}`, '/api/v1/jobs']) {
      const res = await h.call('GET', path);
      expect(res.status).toBe(200);
      noSecret(JSON.stringify(res.body), path);
      expect(JSON.stringify(res.body)).toContain(MASKED);
    }
    const b = formClient(h.app);
    for (const path of ['/jobs', `/jobs/${job.id}`]) {
      const page = await b.request('GET', path);
      expect(page.status).toBe(200);
      noSecret(page.text, path);
      expect(page.text).toContain('POST https://api.example.com/hooks/nightly');
    }
    expect((await b.request('GET', `/jobs/${job.id}`)).text).toContain('X-Tenant: acme');
    noSecret(JSON.stringify(h.rec.logs), 'the log');
    noSecret(JSON.stringify(h.rec.transitions), 'the events');
  });

  it('takes a Lambda target, and a JSON or string body', async () => {
    const lambda = await h.createJob({ command: undefined, lambda: { function: 'billing-close', qualifier: 'live' } });
    expect(lambda).toMatchObject({
      target: 'invoke billing-close:live',
      lambda: { function: 'billing-close', qualifier: 'live' },
      http: null,
    });
    const arn = await h.createJob({
      command: undefined,
      lambda: { function: 'arn:aws:lambda:eu-west-1:123456789012:function:report' },
    });
    expect(arn.target).toBe('invoke arn:aws:lambda:eu-west-1:123456789012:function:report');
    const json = await h.createJob({
      command: undefined,
      http: { url: 'https://example.com/x', method: 'PUT', body: { a: [1] } },
    });
    expect(json.http).toEqual({ url: 'https://example.com/x', method: 'PUT', headers: {}, body: { a: [1] } });
    const text = await h.createJob({ command: undefined, http: { url: 'https://example.com/x', body: 'hello' } });
    expect(text.http.body).toBe('hello');
  });

  it('refuses anything but exactly one target, with a 400 that says so', async () => {
    const bad = async (fields: Record<string, unknown>) => {
      const res = await h.call('POST', '/api/v1/jobs', { body: { name: 'x', ...fields } });
      expect(res.status, JSON.stringify(fields)).toBe(400);
      return res.body.error.details as { path: string; message: string }[];
    };
    expect(await bad({})).toContainEqual({
      path: 'command',
      message: expect.stringMatching(/^give exactly one target: command .*, handler .*, http .* or lambda/),
    });
    expect(await bad({ command: 'true', http: { url: 'https://example.com' } })).toContainEqual({
      path: 'http',
      message: 'give exactly one target (command, handler, http or lambda), not command and http',
    });
    expect(await bad({ handler: 'noop', lambda: { function: 'f' } })).toContainEqual({
      path: 'lambda',
      message: expect.stringMatching(/not handler and lambda/),
    });
    // The database says so too.
    await expect(
      h.env.pool.query(`INSERT INTO jobs (name, command, lambda) VALUES ('both', 'true', '{"function":"f"}')`),
    ).rejects.toThrow(/jobs_one_target/);
    await expect(h.env.pool.query(`INSERT INTO jobs (name) VALUES ('none')`)).rejects.toThrow(/jobs_one_target/);
  });

  it('refuses bad HTTP and Lambda targets field by field', async () => {
    const detail = async (target: Record<string, unknown>) => {
      const res = await h.call('POST', '/api/v1/jobs', { body: { name: 'x', ...target } });
      expect(res.status, JSON.stringify(target)).toBe(400);
      return (res.body.error.details as { path: string; message: string }[])[0];
    };
    expect(await detail({ http: { url: 'not a url' } })).toMatchObject({ path: 'http.url' });
    expect(await detail({ http: { url: 'ftp://example.com/x' } })).toEqual({
      path: 'http.url',
      message: 'must be an http: or https: URL',
    });
    expect(await detail({ http: { url: 'https://u:p@example.com/' } })).toMatchObject({
      path: 'http.url',
      message: expect.stringMatching(/must not carry credentials/),
    });
    expect(await detail({ http: { url: 'https://example.com', method: 'TRACE' } })).toMatchObject({
      path: 'http.method',
    });
    expect(await detail({ http: { url: 'https://example.com', headers: { 'Idempotency-Key': 'mine' } } })).toEqual({
      path: 'http.headers.Idempotency-Key',
      message: 'Idempotency-Key is set by the scheduler on every request',
    });
    expect(
      await detail({ http: { url: 'https://example.com', headers: { 'X-A': 'a\r\nInjected: yes' } } }),
    ).toMatchObject({ path: 'http.headers.X-A' });
    expect(await detail({ http: { url: 'https://example.com', headers: { 'bad name': 'v' } } })).toMatchObject({
      path: expect.stringMatching(/^http\.headers/),
    });
    // JSON.parse keeps `__proto__` as an own key, as a request body does; a header of that name is refused, not lost.
    const proto = JSON.parse('{"__proto__": "x", "X-Ok": "y"}') as Record<string, string>;
    expect(await detail({ http: { url: 'https://example.com', headers: proto } })).toEqual({
      path: 'http.headers.__proto__',
      message: '__proto__ is not taken as a header name (as a JSON object key it would be lost)',
    });
    const job = await h.createJob({ command: null, http: { url: 'https://example.com/x' } });
    const patched = await h.call('PATCH', `/api/v1/jobs/${job.id}`, {
      body: { http: { url: 'https://example.com/x', headers: proto } },
    });
    expect(patched.status).toBe(400);
    expect(patched.body.error.details[0]).toMatchObject({ path: 'http.headers.__proto__' });
    expect(await detail({ http: { url: 'https://example.com', extra: 1 } })).toMatchObject({ path: 'http.extra' });
    expect(await detail({ http: { url: 'https://example.com', body: 'x'.repeat(70_000) } })).toMatchObject({
      path: 'http.body',
      message: expect.stringMatching(/limit is 65536/),
    });
    expect(await detail({ lambda: { function: 'no spaces allowed' } })).toMatchObject({ path: 'lambda.function' });
    expect(await detail({ lambda: { function: 'f', qualifier: 'a:b' } })).toMatchObject({ path: 'lambda.qualifier' });
  });

  it('refuses a literal denied address at create (loopback, private, metadata, CGNAT, unique-local, mapped, compatible)', async () => {
    for (const host of [
      '127.0.0.2',
      '[::1]',
      '10.1.2.3',
      '169.254.169.254',
      '100.64.0.1',
      '[fd00:ec2::254]',
      '0.0.0.0',
      '[::ffff:127.0.0.1]',
      '2130706433',
      '[::127.0.0.1]',
      '[::a9fe:a9fe]',
      '[::7f00:1]',
      '[::10.0.0.1]',
    ]) {
      const res = await h.call('POST', '/api/v1/jobs', { body: { name: 'x', http: { url: `http://${host}/hook` } } });
      expect(res.status, host).toBe(400);
      expect(res.body.error.details[0], host).toMatchObject({
        path: 'http.url',
        message: expect.stringMatching(/HTTP_TARGET_ALLOW/),
      });
    }
    // localhost is loopback by definition: refused at create, like 127.0.0.1, not left to fail at run time.
    for (const host of ['localhost', 'LOCALHOST.', 'hooks.localhost:8080']) {
      const res = await h.call('POST', '/api/v1/jobs', { body: { name: 'l', http: { url: `http://${host}/hook` } } });
      expect(res.status, host).toBe(400);
      expect(res.body.error.details[0].message, host).toMatch(/is a loopback name: .*HTTP_TARGET_ALLOW/);
    }
    // Any other name is judged on what it resolves to, at each attempt, not at create.
    expect(
      (await h.call('POST', '/api/v1/jobs', { body: { name: 'n', http: { url: 'http://example.invalid/hook' } } }))
        .status,
    ).toBe(201);
  });

  it('accepts localhost when HTTP_TARGET_ALLOW lets loopback in (by range or by name)', async () => {
    for (const allow of [{ cidrs: ['127.0.0.0/8'] }, { cidrs: ['::1/128'] }, { hosts: ['localhost'] }]) {
      await h.cleanup();
      h = await apiHarness({ targetPolicy: createAddressPolicy(allow) });
      const body = { name: 'local', http: { url: 'http://localhost:3000/hook' } };
      expect((await h.call('POST', '/api/v1/jobs', { body })).status, JSON.stringify(allow)).toBe(201);
    }
  });

  it('accepts a denied literal address that HTTP_TARGET_ALLOW lists', async () => {
    await h.cleanup();
    h = await apiHarness({ targetPolicy: createAddressPolicy({ cidrs: ['10.0.0.0/8'] }) });
    expect(
      (await h.call('POST', '/api/v1/jobs', { body: { name: 'a', http: { url: 'http://10.1.2.3/hook' } } })).status,
    ).toBe(201);
    expect(
      (await h.call('POST', '/api/v1/jobs', { body: { name: 'b', http: { url: 'http://127.0.0.1/hook' } } })).status,
    ).toBe(400);
  });
});

describe('secrets through a run', () => {
  it('sends the secret headers to the receiver and never logs, emits or records them', async () => {
    const receiver = await startReceiver();
    await h.cleanup();
    h = await apiHarness({ targetPolicy: createAddressPolicy({ cidrs: ['127.0.0.0/8'] }) });
    const e = engine(h.env);
    try {
      receiver.respond = (_req, res) => {
        // A response that echoes credentials in its headers: the output records none of them.
        res.writeHead(500, { 'set-cookie': 'sid=cookie-000', 'x-api-key': 'key-456', 'content-type': 'text/plain' });
        res.end('failed');
        return true;
      };
      const job = await h.createJob({
        command: undefined,
        max_retries: 0,
        http: { url: receiver.url(), headers: SECRETS },
      });
      const run = await h.call('POST', `/api/v1/jobs/${job.id}/trigger`);
      await e.worker({ targets: { http: { policy: createAddressPolicy({ cidrs: ['127.0.0.0/8'] }) } }, pollMs: 50 });
      const done = await eventually(async () => {
        const res = await h.call('GET', `/api/v1/executions/${run.body.id}`);
        return res.body.status === 'dead' ? res.body : null;
      });
      expect(receiver.requests[0]!.headers).toMatchObject({
        authorization: SECRETS.Authorization,
        'x-api-key': SECRETS['X-Api-Key'],
      });
      expect(done.output).toBe('HTTP 500 Internal Server Error\ncontent-type: text/plain\n\nfailed');
      const b = formClient(h.app);
      const page = await b.request('GET', `/executions/${run.body.id}`);
      for (const [where, text] of [
        ['execution', JSON.stringify(done)],
        ['execution page', page.text],
        ['worker log', JSON.stringify(e.logs)],
        ['worker events', JSON.stringify(e.transitions)],
        ['API log', JSON.stringify(h.rec.logs)],
        ['API events', JSON.stringify(h.rec.transitions)],
      ] as const)
        noSecret(text, where);
    } finally {
      await e.stopAll();
      await receiver.close();
    }
  });
});

describe('editing targets', () => {
  it('keeps a stored secret when PATCH sends its masked value back, replaces it when given, and masks versions', async () => {
    const job = await h.createJob({
      command: undefined,
      http: { url: 'https://example.com/a', headers: { Authorization: 'Bearer old-secret-1', 'X-Tenant': 'acme' } },
    });
    const shown = job.http;
    // What a prefilled form sends: the masked value as shown, with another field changed.
    const patched = await h.call('PATCH', `/api/v1/jobs/${job.id}`, {
      body: { http: { ...shown, url: 'https://example.com/b' } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.http.headers).toEqual({ Authorization: MASKED, 'X-Tenant': 'acme' });
    const stored = async () => (await h.env.pool.query('SELECT http FROM jobs WHERE id = $1', [job.id])).rows[0].http;
    expect((await stored()).headers.Authorization).toBe('Bearer old-secret-1');
    expect((await stored()).url).toBe('https://example.com/b');
    await h.call('PATCH', `/api/v1/jobs/${job.id}`, {
      body: { http: { ...shown, headers: { Authorization: 'Bearer new-secret-2' } } },
    });
    expect((await stored()).headers).toEqual({ Authorization: 'Bearer new-secret-2' });
    const versions = await h.call('GET', `/api/v1/jobs/${job.id}/versions`);
    expect(versions.status).toBe(200);
    expect(JSON.stringify(versions.body)).not.toMatch(/old-secret-1|new-secret-2/);
    noSecret(JSON.stringify(h.rec.logs), 'the log');
    expect(JSON.stringify(h.rec.logs)).not.toMatch(/old-secret-1|new-secret-2/);
  });

  it('switches a job to another target with the old one cleared (JSON Merge Patch), and refuses a denied literal', async () => {
    const job = await h.createJob({ command: 'echo hi' });
    expect((await h.call('PATCH', `/api/v1/jobs/${job.id}`, { body: { lambda: { function: 'f' } } })).status).toBe(400);
    const switched = await h.call('PATCH', `/api/v1/jobs/${job.id}`, {
      body: { command: null, lambda: { function: 'f', qualifier: '2' } },
    });
    expect(switched.body).toMatchObject({ command: null, target: 'invoke f:2' });
    const denied = await h.call('PATCH', `/api/v1/jobs/${job.id}`, {
      body: { lambda: null, http: { url: 'http://169.254.169.254/latest' } },
    });
    expect(denied.status).toBe(400);
    expect(denied.body.error.details[0]).toMatchObject({
      path: 'http.url',
      message: expect.stringMatching(/link-local/),
    });
  });
});
