/**
 * The dashboard's job form with every target: an HTTP request (headers as lines, body as JSON or text), a Lambda
 * function, problems shown beside the target's own fields, and a job's target back as form values (masked).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MASKED } from '@jobs/core';
import { formClient, type FormClient } from '../browser/form-client';
import { apiHarness, type Harness } from '../api/harness';
import { targetFormValues } from '../../packages/dashboard/src/target-input';

let h: Harness;
let b: FormClient;
beforeEach(async () => {
  h = await apiHarness();
  b = formClient(h.app);
});
afterEach(() => h.cleanup());

async function submit(form: Record<string, string>) {
  return b.request('POST', '/jobs', {
    form: { _csrf: await b.csrf(), name: `form-${Math.random().toString(36).slice(2)}`, ...form },
  });
}
const created = async (res: { status: number; headers: Headers }) => {
  expect(res.status).toBe(303);
  const id = /^\/jobs\/(\d+)$/.exec(res.headers.get('location')!)![1]!;
  return (await h.call('GET', `/api/v1/jobs/${id}`)).body;
};

describe('job form targets', () => {
  it('offers every target on the new-job page', async () => {
    const page = (await b.request('GET', '/jobs/new')).text;
    for (const name of [
      'target',
      'command',
      'http_method',
      'http_url',
      'http_headers',
      'http_body',
      'lambda_function',
      'lambda_qualifier',
    ]) {
      expect(page).toContain(`name="${name}"`);
    }
    expect(page).toContain('<option value="http">an HTTP request</option>');
  });

  it('creates an HTTP job: headers from lines, a JSON body, the command field ignored', async () => {
    const job = await created(
      await submit({
        target: 'http',
        command: 'echo ignored',
        http_method: 'PUT',
        http_url: 'https://api.example.com/hooks/nightly',
        http_headers: 'Authorization: Bearer sk_live_1\r\nX-Tenant: acme\r\n\r\n',
        http_body: '{"report":\r\n "daily"}',
      }),
    );
    expect(job).toMatchObject({
      command: null,
      target: 'PUT https://api.example.com/hooks/nightly',
      http: {
        method: 'PUT',
        url: 'https://api.example.com/hooks/nightly',
        headers: { Authorization: MASKED, 'X-Tenant': 'acme' },
        body: { report: 'daily' },
      },
    });
    const page = (await b.request('GET', `/jobs/${job.id}`)).text;
    expect(page).toContain('PUT https://api.example.com/hooks/nightly');
    expect(page).not.toContain('sk_live_1');
    const text = await created(
      await submit({ target: 'http', http_url: 'https://example.com/x', http_body: 'plain words' }),
    );
    expect(text.http).toMatchObject({ method: 'POST', body: 'plain words' });
    const payload = await created(await submit({ target: 'http', http_url: 'https://example.com/x' }));
    expect(payload.http).not.toHaveProperty('body');
  });

  it('creates a Lambda job', async () => {
    const job = await created(
      await submit({ target: 'lambda', lambda_function: 'billing-close', lambda_qualifier: 'live' }),
    );
    expect(job).toMatchObject({
      target: 'invoke billing-close:live',
      lambda: { function: 'billing-close', qualifier: 'live' },
      command: null,
    });
    const jobs = (await b.request('GET', '/jobs')).text;
    expect(jobs).toContain('invoke billing-close:live');
  });

  it('shows each problem beside the target field it is about', async () => {
    const bad = async (form: Record<string, string>) => {
      const res = await submit(form);
      expect(res.status).toBe(303);
      return (await b.request('GET', res.headers.get('location')!)).text;
    };
    const loopback = await bad({ target: 'http', http_url: 'http://127.0.0.1/hook', http_headers: 'X-A: 1' });
    expect(loopback).toMatch(/id="f-http_url-error">127\.0\.0\.1 is a loopback address/);
    const header = await bad({ target: 'http', http_url: 'https://example.com', http_headers: 'no colon here' });
    expect(header).toContain('id="f-http_headers-error">line 1 is not &quot;Name: value&quot;');
    const reserved = await bad({ target: 'http', http_url: 'https://example.com', http_headers: 'Idempotency-Key: x' });
    expect(reserved).toContain('id="f-http_headers-error">Idempotency-Key is set by the scheduler on every request');
    const proto = await bad({ target: 'http', http_url: 'https://example.com', http_headers: '__proto__: x\nX-A: 1' });
    expect(proto).toContain('id="f-http_headers-error">__proto__ is not taken as a header name');
    const lambda = await bad({ target: 'lambda', lambda_function: '' });
    expect(lambda).toMatch(/id="f-lambda_function-error">/);
    // Typed values come back as typed.
    expect(header).toContain('no colon here');
  });

  it("gives a job's target back as form values, secrets masked (the edit form's prefill)", async () => {
    const job = (
      await h.createJob({
        command: undefined,
        http: {
          url: 'https://example.com/a',
          method: 'PATCH',
          headers: { 'X-Api-Key': 'k-1', Accept: 'text/plain' },
          body: { a: 1 },
        },
      })
    ).id;
    const values = targetFormValues((await h.env.store.jobGet(job))!);
    expect(values).toMatchObject({
      target: 'http',
      http_method: 'PATCH',
      http_url: 'https://example.com/a',
      http_headers: `Accept: text/plain\nX-Api-Key: ${MASKED}`,
      http_body: '{\n  "a": 1\n}',
    });
  });
});
