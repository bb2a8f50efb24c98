/**
 * HTTP targets through the whole engine (real PostgreSQL, Redis, worker and local receiver): the outcome rules
 * decide retries, Retry-After sets the earliest retry (capped at the backoff max), final failures are dead at once.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAddressPolicy, createJob, triggerJob, type HttpTarget, type Job } from '@jobs/core';
import { createTestEnv, eventually, type TestEnv } from '../support/env';
import { engine } from '../support/engine';
import { jobSpec } from '../support/fixtures';
import { deadEndpoint } from '../lambda/put-events-server';
import { startReceiver, type Receiver } from './receiver';

let env: TestEnv;
let e: ReturnType<typeof engine>;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());
beforeEach(async () => {
  env = await createTestEnv('http_targets');
  e = engine(env);
  receiver.requests.length = 0;
  receiver.respond = () => undefined;
});
afterEach(async () => {
  await e.stopAll();
  await env.cleanup();
});

const targets = { http: { policy: createAddressPolicy({ cidrs: ['127.0.0.0/8'] }) } };

async function runJob(http: Partial<HttpTarget>, fields: Parameters<typeof jobSpec>[0] = {}) {
  const job: Job = await createJob(
    e.deps,
    jobSpec({
      handler: null,
      http: { url: receiver.url(), method: 'POST', headers: {}, ...http },
      payload: { hello: 'world' },
      ...fields,
    }),
  );
  const { execution } = await triggerJob(e.deps, { jobId: job.id });
  await e.worker({ targets, pollMs: 50 });
  return { job, first: execution };
}

/** The job's chain once its last attempt is final, oldest first. */
async function settledChain(jobId: string, attempts: number, timeoutMs = 15_000) {
  return eventually(async () => {
    const list = (await env.store.executionList({ jobId, limit: 20 })).reverse();
    const last = list[list.length - 1];
    return list.length === attempts && last && ['succeeded', 'dead'].includes(last.status) ? list : null;
  }, timeoutMs);
}

const answer =
  (codes: [number, Record<string, string>?][]) =>
  (_req: unknown, res: import('node:http').ServerResponse, n: number) => {
    const [status, headers] = codes[Math.min(n, codes.length - 1)]!;
    res.writeHead(status, headers ?? {});
    res.end(`answer ${n}`);
    return true;
  };

describe('HTTP target outcomes', () => {
  it('retries a 503 to success, with the same Idempotency-Key on every attempt of the chain', async () => {
    receiver.respond = answer([[503], [200]]);
    const { job, first } = await runJob(
      {},
      { maxRetries: 3, backoff: { baseMs: 50, factor: 2, maxMs: 1000, jitter: 'none' } },
    );
    const chain = await settledChain(job.id, 2);
    expect(chain.map((x) => [x.attempt, x.status, x.error])).toEqual([
      [1, 'failed', 'HTTP 503 Service Unavailable'],
      [2, 'succeeded', null],
    ]);
    expect((await env.store.executionGet(chain[1]!.id))!.output).toBe('HTTP 200 OK\n\nanswer 1');
    expect(
      receiver.requests.map((r) => [
        r.headers['jobs-attempt'],
        r.headers['idempotency-key'],
        r.headers['jobs-execution-id'],
        r.body,
      ]),
    ).toEqual([
      ['1', `jobs-${first.id}`, first.id, '{"hello":"world"}'],
      ['2', `jobs-${first.id}`, chain[1]!.id, '{"hello":"world"}'],
    ]);
  });

  it('does not retry a 429 with Retry-After: 3 before 3 s have passed', async () => {
    receiver.respond = answer([[429, { 'retry-after': '3' }], [200]]);
    const { job } = await runJob(
      {},
      { maxRetries: 2, backoff: { baseMs: 0, factor: 2, maxMs: 60_000, jitter: 'none' } },
    );
    const chain = await settledChain(job.id, 2);
    expect(chain.map((x) => x.status)).toEqual(['failed', 'succeeded']);
    const waited = receiver.requests[1]!.at - receiver.requests[0]!.at;
    expect(waited).toBeGreaterThanOrEqual(3000);
    expect(waited).toBeLessThan(6000);
  });

  it('caps a Retry-After at the backoff maximum', async () => {
    receiver.respond = answer([[503, { 'retry-after': '3600' }], [200]]);
    const { job } = await runJob({}, { maxRetries: 2, backoff: { baseMs: 0, factor: 2, maxMs: 300, jitter: 'none' } });
    await settledChain(job.id, 2, 5000);
    expect(receiver.requests[1]!.at - receiver.requests[0]!.at).toBeLessThan(3000);
  });

  it('dead-letters a 400 after one attempt, whatever retries are left', async () => {
    receiver.respond = answer([[400]]);
    const { job } = await runJob({}, { maxRetries: 5 });
    const chain = await settledChain(job.id, 1);
    expect(chain.map((x) => [x.status, x.error])).toEqual([
      ['dead', 'HTTP 400 Bad Request (final: a 4xx other than 408 and 429 is not retried)'],
    ]);
    expect((await env.queue.depth()).short.dead).toBe(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.requests).toHaveLength(1);
  });

  it('times out a request that outlives timeout_seconds, and retries it', async () => {
    receiver.respond = (_req, res, n) => {
      if (n === 0) return new Promise<boolean>(() => undefined); // the first request never gets an answer
      res.end('late but fine');
      return true;
    };
    const { job } = await runJob(
      {},
      { timeoutMs: 1000, maxRetries: 1, backoff: { baseMs: 0, factor: 2, maxMs: 0, jitter: 'none' } },
    );
    const chain = await settledChain(job.id, 2);
    expect(chain.map((x) => [x.status, x.error])).toEqual([
      ['failed', 'timed out after 1000 ms'],
      ['succeeded', null],
    ]);
    expect(chain[0]!.durationMs).toBeGreaterThanOrEqual(1000);
    expect(chain[0]!.durationMs).toBeLessThan(3000);
  });

  it('retries a refused connection by the job policy, then dead-letters it', async () => {
    const { job } = await runJob(
      { url: `${await deadEndpoint()}/hook` },
      { maxRetries: 1, backoff: { baseMs: 0, factor: 2, maxMs: 0, jitter: 'none' } },
    );
    const chain = await settledChain(job.id, 2);
    expect(chain.map((x) => x.status)).toEqual(['failed', 'dead']);
    expect(chain[1]!.error).toMatch(/connection refused/);
  });

  it('dead-letters at once a name that resolves to a denied address, saying so', async () => {
    const job = await createJob(
      e.deps,
      jobSpec({
        handler: null,
        http: { url: receiver.url('/hook', 'localhost'), method: 'POST', headers: {} },
        maxRetries: 3,
      }),
    );
    await triggerJob(e.deps, { jobId: job.id });
    await e.worker({ targets: { http: { policy: createAddressPolicy() } }, pollMs: 50 });
    const chain = await settledChain(job.id, 1);
    expect(chain[0]!.status).toBe('dead');
    expect(chain[0]!.error).toMatch(/^refused: localhost is a loopback name: 127\.0\.0\.1 is a loopback address/);
    expect(receiver.requests).toEqual([]);
  });
});
