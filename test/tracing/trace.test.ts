/**
 * Tracing end to end: `npm start` exporting to a local OTLP receiver. One trace runs from the caller's traceparent
 * through POST /trigger, the trigger, the attempt on the worker, and the command, which sees its attempt's span as
 * TRACEPARENT, and into an HTTP target request, which gets its client span as `traceparent`. A cron run starts its
 * own trace.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createTestEnv, eventually, type TestEnv } from '../support/env';
import { spawnEntry, type Child } from '../support/processes';
import { startReceiver } from '../targets/receiver';
import { startOtlpReceiver } from './otlp-receiver';

let env: TestEnv;
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
let child: Child | null = null;

beforeEach(async () => {
  env = await createTestEnv('trace');
  receiver = await startOtlpReceiver();
});
afterEach(async () => {
  if (child) {
    child.kill('SIGKILL');
    await child.exited;
    child = null;
  }
  await receiver.close();
  await env.cleanup();
});

const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

it('follows one request from POST /trigger through the attempt and into the command', async () => {
  child = spawnEntry('functions/local.ts', {
    ...env.childEnv,
    HTTP_PORT: '0',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: 'jobs-test',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    SCHEDULE_INTERVAL: '500ms',
  });
  const api = JSON.parse(await child.waitFor(/api\.listening/)).url as string;
  const secret = 'payload-secret-4711';
  const job: any = await (
    await fetch(`${api}/api/v1/jobs`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'traced', command: 'echo "tp=$TRACEPARENT"', payload: { secret } }),
    })
  ).json();
  const triggered = await fetch(`${api}/api/v1/jobs/${job.id}/trigger`, {
    method: 'POST',
    headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
  });
  expect(triggered.status).toBe(201);
  const execution: any = await triggered.json();
  const done = await eventually(async () => {
    const row = await env.store.executionGet(execution.id);
    return row?.status === 'succeeded' ? row : null;
  });

  const trace = () => receiver.spans.filter((s) => s.traceId === CALLER_TRACE);
  await eventually(
    () => trace().some((s) => s.name === 'attempt') && trace().some((s) => s.name.startsWith('POST ')),
    15_000,
    100,
  );
  const spans = trace();
  const request = spans.find((s) => s.name === 'POST /api/v1/jobs/:id/trigger')!;
  const trigger = spans.find((s) => s.name === 'trigger')!;
  const attempt = spans.find((s) => s.name === 'attempt')!;
  expect(request, JSON.stringify(spans.map((s) => s.name))).toBeDefined();
  expect(request.parentSpanId).toBe(CALLER_SPAN);
  expect(request.kind).toBe(2); // SERVER
  expect(request.attributes).toMatchObject({
    'http.route': '/api/v1/jobs/:id/trigger',
    'http.response.status_code': 201,
  });
  expect(trigger.parentSpanId).toBe(request.spanId);
  expect(trigger.attributes).toMatchObject({ 'job.id': job.id, 'execution.id': execution.id });
  expect(attempt.parentSpanId).toBe(trigger.spanId);
  expect(attempt.service).toBe('jobs-test');
  expect(attempt.attributes).toMatchObject({
    'job.id': job.id,
    'execution.id': execution.id,
    'execution.attempt': 1,
    'execution.lane': 'short',
    outcome: 'succeeded',
    'process.exit_code': 0,
  });
  // The command ran with its attempt's span as its parent context.
  expect(done.output).toBe(`tp=00-${CALLER_TRACE}-${attempt.spanId}-01\n`);
  // Nothing of the payload travels in any span.
  expect(JSON.stringify(receiver.spans)).not.toContain(secret);
});

it("starts a new trace for a cron run, and keeps a retry in its chain's trace", async () => {
  child = spawnEntry('functions/local.ts', {
    ...env.childEnv,
    HTTP_PORT: '0',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    SCHEDULE_INTERVAL: '500ms',
  });
  const api = JSON.parse(await child.waitFor(/api\.listening/)).url as string;
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}): Promise<any> =>
    (
      await fetch(`${api}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body: JSON.stringify(body),
      })
    ).json();
  const cron = await post('/api/v1/jobs', { name: 'every-second', cron_expr: '* * * * * *', handler: 'noop' });
  const flaky = await post('/api/v1/jobs', {
    name: 'flaky',
    handler: 'no-such-handler',
    max_retries: 1,
    backoff: { base_seconds: 0, factor: 1, max_seconds: 0, jitter: 'none' },
  });
  const failing = await post(
    `/api/v1/jobs/${flaky.id}/trigger`,
    {},
    { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
  );

  await eventually(
    () => receiver.spans.some((s) => s.name === 'attempt' && s.attributes['job.id'] === cron.id),
    15_000,
    100,
  );
  const cronAttempt = receiver.spans.find((s) => s.name === 'attempt' && s.attributes['job.id'] === cron.id)!;
  expect(cronAttempt.parentSpanId).toBe('');
  expect(cronAttempt.traceId).not.toBe(CALLER_TRACE);
  expect(cronAttempt.attributes['execution.trigger']).toBe('cron');

  const attempts = await eventually(
    () => {
      const a = receiver.spans.filter((s) => s.name === 'attempt' && s.attributes['job.id'] === flaky.id);
      return a.length === 2 ? a : null;
    },
    15_000,
    100,
  );
  expect(attempts.every((s) => s.traceId === CALLER_TRACE)).toBe(true);
  expect(attempts.map((s) => s.attributes['execution.attempt']).sort()).toEqual([1, 2]);
  expect(attempts.every((s) => s.attributes.outcome === 'failed' && s.status.code === 2)).toBe(true);
  expect(failing.id).toBe(
    String(attempts.find((s) => s.attributes['execution.attempt'] === 1)!.attributes['execution.id']),
  );
});

it('continues the trace into an HTTP target request, which gets its span as traceparent', async () => {
  const target = await startReceiver();
  try {
    child = spawnEntry('functions/local.ts', {
      ...env.childEnv,
      HTTP_PORT: '0',
      HTTP_TARGET_ALLOW: '127.0.0.0/8,::1',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    const api = JSON.parse(await child.waitFor(/api\.listening/)).url as string;
    const job: any = await (
      await fetch(`${api}/api/v1/jobs`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          name: 'hook',
          http: { url: target.url('/hook?token=secret-in-query'), headers: { Authorization: 'Bearer hook-secret' } },
        }),
      })
    ).json();
    expect(job.id, JSON.stringify(job)).toBeDefined();
    const execution: any = await (
      await fetch(`${api}/api/v1/jobs/${job.id}/trigger`, {
        method: 'POST',
        headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      })
    ).json();
    await eventually(async () => (await env.store.executionGet(execution.id))?.status === 'succeeded');
    const spans = await eventually(
      () => {
        const t = receiver.spans.filter((s) => s.traceId === CALLER_TRACE);
        return t.some((s) => s.kind === 3) && t.some((s) => s.name === 'attempt') ? t : null;
      },
      15_000,
      100,
    );
    const attempt = spans.find((s) => s.name === 'attempt')!;
    const client = spans.find((s) => s.kind === 3)!; // CLIENT
    expect(client.parentSpanId).toBe(attempt.spanId);
    expect(client.name).toBe(`POST 127.0.0.1:${target.port}`);
    expect(client.attributes).toMatchObject({
      'http.request.method': 'POST',
      'server.address': '127.0.0.1',
      'http.response.status_code': 200,
      'execution.id': execution.id,
    });
    // The target received the client span's context.
    expect(target.requests).toHaveLength(1);
    expect(target.requests[0]!.headers.traceparent).toBe(`00-${CALLER_TRACE}-${client.spanId}-01`);
    const exported = JSON.stringify(receiver.spans);
    expect(exported).not.toContain('secret-in-query');
    expect(exported).not.toContain('hook-secret');
  } finally {
    await target.close();
  }
});
