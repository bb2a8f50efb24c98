/**
 * Lambda targets with the real @aws-sdk/client-lambda against a local fake of the Invoke API (LAMBDA_ENDPOINT):
 * success, FunctionError, throttling (retried, never inside the SDK), and invoke errors no retry can fix.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createJob, LazyAbort, triggerJob, type StartedExecution } from '@jobs/core';
import { createRunner } from '@jobs/runner';
import { createTestEnv, eventually, type TestEnv } from '../support/env';
import { engine } from '../support/engine';
import { jobSpec } from '../support/fixtures';
import { startLambdaServer, type LambdaServer } from './lambda-server';

let fake: LambdaServer;
beforeAll(async () => {
  fake = await startLambdaServer();
  // The SDK's default credential chain reads these; nothing reaches AWS.
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await fake.close();
});
beforeEach(() => {
  fake.calls.length = 0;
  fake.functions = {};
});

const targets = () => ({ lambda: { endpoint: fake.url, region: 'eu-west-1' } });

function started(fn: string, qualifier: string | null, payload: unknown = { period: '2026-11' }): StartedExecution {
  return {
    id: '9',
    token: 't',
    jobId: '3',
    attempt: 1,
    rootId: '9',
    trigger: 'manual',
    lane: 'short',
    priority: 0,
    scheduledFor: new Date(),
    payload,
    command: null,
    handler: null,
    http: null,
    lambda: { function: fn, qualifier },
    timeoutMs: 5000,
    maxRetries: 0,
    backoff: { baseMs: 0, factor: 2, maxMs: 0, jitter: 'none' },
    overlap: 'allow',
    flowKey: null,
    jobVersion: 1,
    timezone: 'UTC',
    delivery: 1,
  };
}

describe('Lambda target: the adapter', () => {
  it('invokes RequestResponse with the payload as the event and records the response', async () => {
    fake.functions['billing-close'] = (call) => ({ result: { closed: JSON.parse(call.event).period } });
    const result = await createRunner(targets()).run(started('billing-close', 'live'), new LazyAbort());
    expect(result).toMatchObject({ ok: true, error: null });
    expect(result.output).toBe('invoked billing-close:live (version $LATEST): status 200\n{"closed":"2026-11"}');
    expect(fake.calls).toMatchObject([
      {
        functionName: 'billing-close',
        qualifier: 'live',
        invocationType: 'RequestResponse',
        event: '{"period":"2026-11"}',
      },
    ]);
  });

  it("fails on a FunctionError (retryable), with the function's error as output", async () => {
    fake.functions.broken = () => ({ functionError: 'Unhandled', errorMessage: 'boom' });
    const result = await createRunner(targets()).run(started('broken', null), new LazyAbort());
    expect(result).toMatchObject({ ok: false, error: 'broken failed: FunctionError Unhandled' });
    expect(result.final).toBeFalsy();
    expect(result.output).toContain('"errorMessage":"boom"');
  });

  it('treats throttling as retryable (with its Retry-After), and is not retried inside the SDK', async () => {
    fake.functions.busy = () => ({
      status: 429,
      type: 'TooManyRequestsException',
      message: 'Rate Exceeded.',
      retryAfter: '2',
    });
    const result = await createRunner(targets()).run(started('busy', null), new LazyAbort());
    expect(result).toMatchObject({ ok: false, final: false, retryAfterMs: 2000 });
    expect(result.error).toBe('invoke busy failed: TooManyRequestsException (HTTP 429): Rate Exceeded.');
    expect(fake.calls).toHaveLength(1);
  });

  it('makes an invoke error no retry can fix final (no such function)', async () => {
    const result = await createRunner(targets()).run(started('missing', null), new LazyAbort());
    expect(result).toMatchObject({ ok: false, final: true });
    expect(result.error).toBe(
      'invoke missing failed: ResourceNotFoundException (HTTP 404): Function not found: missing',
    );
  });
});

describe('Lambda target: through the engine', () => {
  let env: TestEnv;
  let e: ReturnType<typeof engine>;
  beforeEach(async () => {
    env = await createTestEnv('lambda_targets');
    e = engine(env);
  });
  afterEach(async () => {
    await e.stopAll();
    await env.cleanup();
  });

  const chainOf = (jobId: string, attempts: number) =>
    eventually(async () => {
      const list = (await env.store.executionList({ jobId, limit: 10 })).reverse();
      return list.length === attempts && ['succeeded', 'dead'].includes(list[attempts - 1]!.status) ? list : null;
    });

  it('retries a throttled invoke to success; dead-letters a function that keeps failing', async () => {
    fake.functions.report = (_c, n) =>
      n === 0 ? { status: 429, type: 'TooManyRequestsException', message: 'Rate Exceeded.' } : { result: 'done' };
    fake.functions.failing = () => ({ functionError: 'Unhandled', errorMessage: 'still broken' });
    const backoff = { baseMs: 0, factor: 2, maxMs: 100, jitter: 'none' as const };
    const ok = await createJob(
      e.deps,
      jobSpec({ handler: null, lambda: { function: 'report', qualifier: null }, maxRetries: 2, backoff }),
    );
    const bad = await createJob(
      e.deps,
      jobSpec({ handler: null, lambda: { function: 'failing', qualifier: '3' }, maxRetries: 1, backoff }),
    );
    await triggerJob(e.deps, { jobId: ok.id, payload: { n: 1 } });
    await triggerJob(e.deps, { jobId: bad.id });
    await e.worker({ targets: targets(), pollMs: 50 });
    expect((await chainOf(ok.id, 2)).map((x) => [x.status, x.error])).toEqual([
      ['failed', 'invoke report failed: TooManyRequestsException (HTTP 429): Rate Exceeded.'],
      ['succeeded', null],
    ]);
    expect((await chainOf(bad.id, 2)).map((x) => [x.status, x.error])).toEqual([
      ['failed', 'failing:3 failed: FunctionError Unhandled'],
      ['dead', 'failing:3 failed: FunctionError Unhandled'],
    ]);
    expect(fake.calls.filter((c) => c.functionName === 'report').map((c) => c.event)).toEqual(['{"n":1}', '{"n":1}']);
  });
});
