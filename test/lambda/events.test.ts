/**
 * The EventBridge publisher (functions/events.ts) through the real AWS SDK, against a local server that answers
 * PutEvents: batching, per-entry failures, an unreachable endpoint, secrets, and the documented event shapes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { Transition } from '@jobs/core';
import { createEventPublisher, type EventPublisher } from '../../functions/events';
import { handler as tickHandler } from '../../functions/tick';
import { handler as workerHandler } from '../../functions/worker';
import { lambdaContext, scheduledEvent, workAvailableEvent } from '../fixtures/events';
import { recorder } from '../support/env';
import { lambdaTestEnv } from './harness';
import { deadEndpoint, startPutEventsServer, type PutEventsServer, type WireEntry } from './put-events-server';

let server: PutEventsServer;
let publishers: EventPublisher[];
let rec: ReturnType<typeof recorder>;

const transitions = (n: number, from = 0): Transition[] =>
  Array.from({ length: n }, (_, i) => ({
    event: 'execution.transition',
    jobId: '7',
    executionId: String(from + i + 1),
    attempt: 1,
    from: 'running',
    to: 'succeeded',
    workerId: 'lambda-host-1-abcd',
    at: new Date('2026-11-30T12:00:00.000Z'),
    error: null,
    durationMs: 12,
    exitCode: 0,
  }));
const publisher = (options: Partial<Parameters<typeof createEventPublisher>[0]> = {}) => {
  const p = createEventPublisher({
    busName: 'jobs-test-bus',
    logger: rec.logger,
    client: server.client(),
    retryBaseMs: 10,
    ...options,
  });
  publishers.push(p);
  return p;
};
const ids = (entries: WireEntry[]) => entries.map((e) => JSON.parse(e.Detail!).execution_id);
const logged = (event: string) => rec.logs.filter((l) => (l.obj as { event?: string }).event === event);

beforeEach(async () => {
  server = await startPutEventsServer();
  publishers = [];
  rec = recorder();
});
afterEach(async () => {
  for (const p of publishers) await p.close(1000);
  await server.close();
});

describe('EventBridge publisher', () => {
  it('sends 25 transitions of one emit in 3 PutEvents calls of at most 10 entries, in order', async () => {
    const events = publisher();
    events.emit(transitions(25));
    expect(await events.flush()).toBe(true);
    expect(server.calls.map((c) => c.entries.length)).toEqual([10, 10, 5]);
    expect(server.calls.every((c) => c.target === 'AWSEvents.PutEvents')).toBe(true);
    expect(server.calls[0]!.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(ids(server.delivered)).toEqual(Array.from({ length: 25 }, (_, i) => String(i + 1)));
    for (const entry of server.delivered) {
      expect(entry).toMatchObject({
        EventBusName: 'jobs-test-bus',
        Source: 'jobs.scheduler',
        DetailType: 'execution.transition',
      });
      // The event time is the transition's, not the time it was sent.
      expect(entry.Time).toBe(Date.parse('2026-11-30T12:00:00.000Z') / 1000);
    }
  });

  it('joins emits made in the same turn of the event loop into one call', async () => {
    const events = publisher();
    for (let i = 0; i < 4; i++) events.emit(transitions(2, i * 2));
    await events.flush();
    expect(server.calls.map((c) => c.entries.length)).toEqual([8]);
  });

  it('publishes only transitions into the statuses it is given (EVENT_TRANSITIONS)', async () => {
    const events = publisher({ statuses: ['dead', 'failed'] });
    const mixed = transitions(6).map((t, i) => ({
      ...t,
      to: (['succeeded', 'failed', 'running', 'dead', 'queued', 'failed'] as const)[i]!,
    }));
    events.emit(mixed);
    events.publish('work-available', { lanes: { short: { ready: 1, delayed: 0 } } });
    expect(await events.flush()).toBe(true);
    const delivered = server.delivered.map((e) =>
      e.DetailType === 'work-available' ? 'work' : JSON.parse(e.Detail!).to,
    );
    expect(delivered).toEqual(['failed', 'dead', 'failed', 'work']);
  });

  it('retries entries EventBridge failed one by one, and delivers each exactly once', async () => {
    const seen = new Set<string>();
    server.failEntry = (entry) => {
      const id = JSON.parse(entry.Detail!).execution_id as string;
      if (Number(id) % 2 === 0 && !seen.has(id)) {
        seen.add(id);
        return { ErrorCode: 'ThrottlingException', ErrorMessage: 'Rate exceeded' };
      }
      return null;
    };
    const events = publisher();
    events.emit(transitions(10));
    expect(await events.flush()).toBe(true);
    expect(server.calls.map((c) => c.entries.length)).toEqual([10, 5]);
    expect(ids(server.delivered).sort((a, b) => a - b)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    expect(logged('events.entries_failed')).toEqual([
      expect.objectContaining({ obj: expect.objectContaining({ count: 5, codes: ['ThrottlingException'] }) }),
    ]);
  });

  it('gives an entry up after maxAttempts, logs it, and says so on flush', async () => {
    server.failEntry = (entry) =>
      JSON.parse(entry.Detail!).execution_id === '3' ? { ErrorCode: 'InternalFailure', ErrorMessage: 'boom' } : null;
    const events = publisher({ maxAttempts: 3 });
    events.emit(transitions(5));
    expect(await events.flush()).toBe(false);
    expect(ids(server.delivered)).toEqual(['1', '2', '4', '5']);
    expect(server.calls.flatMap((c) => ids(c.entries)).filter((id) => id === '3')).toHaveLength(3);
    expect(logged('events.given_up')).toHaveLength(1);
    // The next flush reports on what was enqueued after this one.
    events.emit(transitions(1, 10));
    expect(await events.flush()).toBe(true);
  });

  it('never blocks or throws in emit() when EventBridge is unreachable, and close() stays bounded', async () => {
    const down = createEventPublisher({
      busName: 'jobs-test-bus',
      logger: rec.logger,
      client: new EventBridgeClient({
        endpoint: await deadEndpoint(),
        region: 'us-east-1',
        credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
        maxAttempts: 1,
      }),
      retryBaseMs: 50,
      maxBuffered: 500,
    });
    const started = performance.now();
    for (let i = 0; i < 10; i++) down.emit(transitions(100, i * 100));
    expect(performance.now() - started).toBeLessThan(50);
    expect(await down.flush(300)).toBe(false);
    expect(logged('events.put_failed').length).toBeGreaterThan(0);
    const closing = performance.now();
    await down.close(200);
    expect(performance.now() - closing).toBeLessThan(2_000);
    const dropped = logged('events.dropped').reduce((n, l) => n + (l.obj as { count: number }).count, 0);
    // The buffer kept the newest 500; everything not sent by close() is counted as dropped.
    expect(dropped).toBeGreaterThanOrEqual(500);
  });

  it('does not hold flush() past its timeout while EventBridge is slow', async () => {
    server.delayMs = 1500;
    const events = publisher();
    events.emit(transitions(3));
    const started = performance.now();
    expect(await events.flush(100)).toBe(false);
    expect(performance.now() - started).toBeLessThan(500);
    expect(await events.flush()).toBe(true);
  });

  it('cuts an over-long error text in the event (the execution row keeps it whole)', async () => {
    const events = publisher();
    events.emit([{ ...transitions(1)[0]!, to: 'failed', error: 'x'.repeat(5000) }]);
    await events.flush();
    const detail = JSON.parse(server.delivered[0]!.Detail!);
    expect(detail.error).toHaveLength(1024 + '… [truncated]'.length);
  });
});

/** The shapes documented in README "Events"; a change here is a breaking change for users' bus rules. */
const TRANSITION_FIELDS = [
  'event',
  'job_id',
  'execution_id',
  'attempt',
  'from',
  'to',
  'worker_id',
  'at',
  'trigger',
  'error',
  'duration_ms',
  'exit_code',
];

describe('events from the Lambda handlers', () => {
  it('carry only transition fields and queue depths: no URL, password, API key or AWS secret', async () => {
    const secrets = {
      db: 'hunter2-db-password',
      redis: 'hunter2-redis-password',
      api: 'sekret-api-key-1',
      aws: 'aws-secret-zzz-123',
    };
    const env = await lambdaTestEnv('levents');
    const dbUrl = new URL(env.childEnv.DATABASE_URL!);
    dbUrl.password = secrets.db;
    const redisUrl = new URL(env.childEnv.REDIS_URL!);
    redisUrl.password = secrets.redis;
    await env.setEnv({
      ...server.env(),
      AWS_SECRET_ACCESS_KEY: secrets.aws,
      EVENT_BUS_NAME: 'jobs-test-bus',
      // Every kind of transition, not the default's failures and dead letters.
      EVENT_TRANSITIONS: 'all',
      DATABASE_URL: dbUrl.toString(),
      REDIS_URL: redisUrl.toString(),
      API_KEYS: secrets.api,
    });
    try {
      // A job whose command prints the scheduler's secrets (it must not even see them) and fails: every kind of
      // transition goes out, with an error text.
      const failing = await env.job({
        handler: null,
        command: 'echo "$DATABASE_URL $API_KEYS"; exit 3',
        maxRetries: 1,
        backoff: { baseMs: 10, factor: 1, maxMs: 10, jitter: 'none' },
      });
      const fine = await env.job({ handler: 'noop', cronExpr: '0 0 1 1 *' });
      await env.pool.query(`UPDATE jobs SET next_run_at = now() - interval '1 second' WHERE id IN ($1, $2)`, [
        failing.id,
        fine.id,
      ]);
      await env.pool.query(`UPDATE jobs SET cron_expr = '0 0 1 1 *' WHERE id = $1`, [failing.id]);
      await tickHandler(scheduledEvent(), lambdaContext({ functionName: 'Tick', timeoutMs: 60_000 }));
      await workerHandler(workAvailableEvent(), lambdaContext({ functionName: 'Worker', timeoutMs: 900_000 }));
    } finally {
      await env.cleanup();
    }

    const entries = server.calls.flatMap((c) => c.entries);
    const types = new Set(entries.map((e) => e.DetailType));
    expect(types).toEqual(new Set(['execution.transition', 'work-available']));
    const transitionsSeen = entries
      .filter((e) => e.DetailType === 'execution.transition')
      .map((e) => JSON.parse(e.Detail!));
    expect(new Set(transitionsSeen.map((d) => `${d.from}->${d.to}`))).toEqual(
      new Set([
        'null->queued',
        'queued->running',
        'running->succeeded',
        'running->failed',
        'null->retrying',
        'retrying->running',
        'running->dead',
      ]),
    );
    for (const detail of transitionsSeen) {
      for (const key of Object.keys(detail)) expect(TRANSITION_FIELDS).toContain(key);
    }
    const wire = JSON.stringify(entries);
    for (const secret of Object.values(secrets)) expect(wire).not.toContain(secret);
    expect(wire).not.toMatch(/postgres(ql)?:\/\/|rediss?:\/\//);
  });

  it('publish only the statuses EVENT_TRANSITIONS lists; wake-ups always go out', async () => {
    const env = await lambdaTestEnv('levents_filter');
    await env.setEnv({ ...server.env(), EVENT_BUS_NAME: 'jobs-test-bus', EVENT_TRANSITIONS: 'dead' });
    try {
      const failing = await env.job({ handler: null, command: 'exit 3', maxRetries: 0, cronExpr: '0 0 1 1 *' });
      const fine = await env.job({ handler: 'noop', cronExpr: '0 0 1 1 *' });
      await env.pool.query(`UPDATE jobs SET next_run_at = now() - interval '1 second' WHERE id IN ($1, $2)`, [
        failing.id,
        fine.id,
      ]);
      await tickHandler(scheduledEvent(), lambdaContext({ functionName: 'Tick', timeoutMs: 60_000 }));
      await workerHandler(workAvailableEvent(), lambdaContext({ functionName: 'Worker', timeoutMs: 900_000 }));
      const { rows } = await env.pool.query(
        `SELECT status, count(*)::int AS n FROM executions GROUP BY status ORDER BY status`,
      );
      expect(rows).toEqual([
        { status: 'dead', n: 1 },
        { status: 'succeeded', n: 1 },
      ]);
    } finally {
      await env.cleanup();
    }
    const entries = server.calls.flatMap((c) => c.entries);
    const seen = entries.filter((e) => e.DetailType === 'execution.transition').map((e) => JSON.parse(e.Detail!));
    expect(seen.map((d) => `${d.from}->${d.to}`)).toEqual(['running->dead']);
    expect(entries.some((e) => e.DetailType === 'work-available')).toBe(true);
  });

  it('match the documented shapes', async () => {
    const events = createEventPublisher({ busName: 'jobs-test-bus', logger: rec.logger, client: server.client() });
    publishers.push(events);
    events.publish('work-available', { lanes: { short: { ready: 3, delayed: 1 } } });
    events.emit([
      {
        event: 'execution.transition',
        jobId: '42',
        executionId: '1017',
        attempt: 2,
        from: 'running',
        to: 'failed',
        workerId: 'lambda-169.254.12.1-8-1a2b3c4d',
        at: new Date('2026-11-30T12:00:04.512Z'),
        error: 'exit code 3',
        durationMs: 1840,
        exitCode: 3,
      },
    ]);
    await events.flush();
    const [wake, failed] = server.delivered;
    expect({ ...wake, Time: undefined, Detail: JSON.parse(wake!.Detail!) }).toEqual({
      EventBusName: 'jobs-test-bus',
      Source: 'jobs.scheduler',
      DetailType: 'work-available',
      Detail: { lanes: { short: { ready: 3, delayed: 1 } } },
      Time: undefined,
    });
    expect({ ...failed, Detail: JSON.parse(failed!.Detail!) }).toEqual({
      EventBusName: 'jobs-test-bus',
      Source: 'jobs.scheduler',
      DetailType: 'execution.transition',
      Time: 1796040004.512,
      Detail: {
        event: 'execution.transition',
        job_id: '42',
        execution_id: '1017',
        attempt: 2,
        from: 'running',
        to: 'failed',
        worker_id: 'lambda-169.254.12.1-8-1a2b3c4d',
        at: '2026-11-30T12:00:04.512Z',
        error: 'exit code 3',
        duration_ms: 1840,
        exit_code: 3,
      },
    });
  });
});
