/**
 * GET /executions/{id}/output through functions/api.ts with API Gateway HTTP API payload 2.0 events: a Lambda
 * response is buffered whole and must stay under 6 MB, so the text comes in pages with a cursor; a follow stream
 * ends at once with an SSE `retry:` hint (it must not hold one of the API's reserved slots for the timeout), and
 * reconnecting with Last-Event-ID, as EventSource does, goes on without gaps or repeats.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LambdaEvent } from 'hono/aws-lambda';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { OUTPUT_PAGE_BYTES } from '@jobs/api';
import { createLiveOutput, queueKeys } from '@jobs/queue';
import { FIXTURE_API_KEY, FIXTURE_HOST, httpApiGetJobs, lambdaContext } from '../fixtures/events';
import { lambdaTestEnv, type LambdaTestEnv } from './harness';

/** Lambda's limit on a synchronous invocation's response (the JSON the function returns). */
const LAMBDA_RESPONSE_LIMIT = 6 * 1024 * 1024;

let env: LambdaTestEnv;
let api: typeof import('../../functions/api');

const invoke = async (path: string, query: Record<string, string> = {}, headers: Record<string, string> = {}) => {
  const event = httpApiGetJobs();
  const search = new URLSearchParams(query).toString();
  event.rawPath = path;
  event.requestContext.http.path = path;
  event.rawQueryString = search;
  event.queryStringParameters = Object.keys(query).length > 0 ? query : undefined;
  event.headers = { ...event.headers, accept: '*/*', ...headers };
  const started = Date.now();
  const result = (await api.handler(
    event as unknown as LambdaEvent,
    lambdaContext({ functionName: 'ApiHandler', timeoutMs: 25_000 }),
  )) as APIGatewayProxyResult & { headers: Record<string, string> };
  // What Lambda returns to API Gateway: the serialized result, limited to 6 MB.
  expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThan(LAMBDA_RESPONSE_LIMIT / 2);
  // API Gateway decodes a base64 body (hono sends an event stream so) before the client sees it.
  const body = result.isBase64Encoded ? Buffer.from(result.body, 'base64').toString('utf8') : result.body;
  return { ...result, body, ms: Date.now() - started };
};

/** The events of an SSE body. */
const events = (body: string) =>
  body
    .split('\n\n')
    .filter((b) => b.trim())
    .map((block) => {
      const lines = block.split('\n');
      const field = (name: string) =>
        lines.filter((l) => l.startsWith(`${name}:`)).map((l) => l.slice(name.length + 1).replace(/^ /, ''));
      return { event: field('event')[0], id: field('id')[0], retry: field('retry')[0], data: field('data').join('\n') };
    });

/** A running execution, and a writer of its live output that keeps far more than the default (as a PostgreSQL queue can). */
async function runningExecution() {
  const job = await env.job({ handler: 'noop' });
  const [created] = await env.store.executionsEnqueueMany({ jobId: job.id, payloads: [null] });
  await env.pool.query(
    `UPDATE executions SET status = 'running', lease_token = 't', worker_id = 'w', started_at = now(), lease_expires_at = now() + interval '1 hour' WHERE id = $1`,
    [created!.id],
  );
  const live = createLiveOutput(env.redis, queueKeys(env.prefix), {
    flushMs: 60_000,
    maxBytes: 8 * 1024 * 1024,
    budgetBytes: 64 * 1024 * 1024,
  });
  return { id: created!.id, live };
}

/** `bytes` of output, written 16 KiB at a time; lines carry control characters (JSON escapes them as 6 bytes). */
async function print(live: ReturnType<typeof createLiveOutput>, id: string, bytes: number, tag: string) {
  let text = '';
  for (let n = 0; text.length < bytes; n++) {
    const line = `${tag} ${n} \u001b[1mbold\u001b[0m ${'.'.repeat(40)}\n`;
    text += line;
    live.append(id, Buffer.from(line));
    if (n % 128 === 127) await live.flush(); // within one interval's allowance (16 KiB)
  }
  await live.flush();
  return text;
}

beforeAll(async () => {
  env = await lambdaTestEnv('lout', { API_KEYS: FIXTURE_API_KEY, ALLOWED_HOSTS: FIXTURE_HOST });
  api = await import('../../functions/api');
});
afterAll(async () => {
  await api.closeApi();
  await env.cleanup();
});

describe('execution output on Lambda', () => {
  it("pages a running attempt's 3 MB of output under the response limit, every byte once", async () => {
    const { id, live } = await runningExecution();
    try {
      const printed = await print(live, id, 3 * 1024 * 1024, 'run');
      let read = '';
      let cursor: string | undefined;
      let pages = 0;
      for (;;) {
        const res = await invoke(`/api/v1/executions/${id}/output`, cursor ? { cursor } : {});
        expect(res.statusCode).toBe(200);
        expect(res.headers['x-execution-status']).toBe('running');
        expect(Buffer.byteLength(res.body)).toBeLessThanOrEqual(OUTPUT_PAGE_BYTES);
        read += res.body;
        pages++;
        cursor = res.headers['x-output-cursor'];
        if (res.headers['x-output-more'] !== 'true') break;
      }
      expect(pages).toBeGreaterThan(5);
      expect(read).toBe(printed);
      // From the last cursor, only what it prints next.
      const more = await print(live, id, 1000, 'later');
      expect((await invoke(`/api/v1/executions/${id}/output`, { cursor: cursor! })).body).toBe(more);
    } finally {
      await live.close();
    }
  });

  it('pages a final output by byte offset, never cutting a character', async () => {
    const job = await env.job({ handler: 'noop' });
    const [created] = await env.store.executionsEnqueueMany({ jobId: job.id, payloads: [null] });
    const output = 'é€😀 line\n'.repeat(120_000); // about 2 MB
    await env.pool.query(`UPDATE executions SET status = 'succeeded', finished_at = now(), output = $2 WHERE id = $1`, [
      created!.id,
      output,
    ]);
    let read = '';
    let cursor = '0';
    for (;;) {
      const res = await invoke(`/api/v1/executions/${created!.id}/output`, { cursor });
      expect(Buffer.byteLength(res.body)).toBeLessThanOrEqual(OUTPUT_PAGE_BYTES);
      expect(res.body).not.toContain('\ufffd');
      read += res.body;
      cursor = res.headers['x-output-cursor']!;
      if (res.headers['x-output-more'] !== 'true') break;
    }
    expect(read).toBe(output);
    expect((await invoke(`/api/v1/executions/${created!.id}/output`, { cursor: 'x-1' })).statusCode).toBe(400);
  });

  it('ends a follow stream at once with a retry hint; Last-Event-ID reconnects go on without gaps or repeats', async () => {
    const { id, live } = await runningExecution();
    try {
      const printed = await print(live, id, 1.5 * 1024 * 1024, 'follow');
      let followed = '';
      let lastId: string | undefined;
      const seen = new Set<string>();
      let retry: string | undefined;
      for (let round = 0; round < 50; round++) {
        const res = await invoke(
          `/api/v1/executions/${id}/output`,
          { follow: 'true' },
          lastId ? { 'last-event-id': lastId } : {},
        );
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
        // Far inside the API's 25 s timeout: no slot is held while the attempt runs.
        expect(res.ms).toBeLessThan(5_000);
        const got = events(res.body);
        for (const e of got.filter((x) => x.event === 'output')) {
          expect(seen.has(e.id!)).toBe(false);
          seen.add(e.id!);
          followed += e.data;
          lastId = e.id;
        }
        const last = got.at(-1)!;
        expect(last.event).toBe('resume');
        retry = last.retry;
        if (followed.length >= printed.length) break;
        expect(retry).toBe('100'); // cut at the byte cap: come back at once
      }
      // The SSE data of a line loses its trailing newline only in the event framing; the text is the same.
      expect(followed).toBe(printed);
      expect(retry).toBe('2000');

      const next = await print(live, id, 2000, 'next');
      const again = events(
        (await invoke(`/api/v1/executions/${id}/output`, { follow: 'true' }, { 'last-event-id': lastId! })).body,
      );
      expect(
        again
          .filter((e) => e.event === 'output')
          .map((e) => e.data)
          .join(''),
      ).toBe(next);

      await env.pool.query(`UPDATE executions SET status = 'succeeded', finished_at = now() WHERE id = $1`, [id]);
      const done = events(
        (await invoke(`/api/v1/executions/${id}/output`, { follow: 'true' }, { 'last-event-id': lastId! })).body,
      );
      expect(done.at(-1)).toMatchObject({ event: 'end', data: JSON.stringify({ status: 'succeeded' }) });
    } finally {
      await live.close();
    }
  });
});
