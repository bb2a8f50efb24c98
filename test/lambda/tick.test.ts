/** functions/tick.ts invoked with the EventBridge "Scheduled Event", against real PostgreSQL, Redis and a PutEvents endpoint. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Lane } from '@jobs/core';
import { handler } from '../../functions/tick';
import { lambdaContext, scheduledEvent } from '../fixtures/events';
import { lambdaTestEnv, type LambdaTestEnv } from './harness';
import { deadEndpoint, startPutEventsServer, type PutEventsServer } from './put-events-server';

let env: LambdaTestEnv;
let bus: PutEventsServer;

const invoke = () => handler(scheduledEvent(), lambdaContext({ functionName: 'Tick', timeoutMs: 60_000 }));
/** A cron that fires once a year, with next_run_at moved so that exactly one fire time is materialised. */
const yearlyJobDueAt = async (offsetMs: number) => {
  const job = await env.job({ cronExpr: '0 0 1 1 *', handler: 'noop' });
  await env.pool.query(`UPDATE jobs SET next_run_at = now() + $2 * interval '1 millisecond' WHERE id = $1`, [
    job.id,
    offsetMs,
  ]);
  return job;
};
const registerWorker = (w: {
  id: string;
  kind: 'container' | 'lambda';
  lanes: Lane[];
  concurrency: number;
  inFlight: number;
}) =>
  env.store.workerUpsert({ ...w, host: 'test', version: 'test', startedAt: new Date(), lastHeartbeatAt: new Date() });
const details = (type: string) => bus.delivered.filter((e) => e.DetailType === type).map((e) => JSON.parse(e.Detail!));

beforeEach(async () => {
  bus = await startPutEventsServer();
  env = await lambdaTestEnv('ltick', {
    ...bus.env(),
    EVENT_BUS_NAME: 'jobs-test-bus',
    EVENT_TRANSITIONS: 'all',
    SCHEDULE_INTERVAL: '60s',
    LOOKAHEAD: '120s',
  });
});
afterEach(async () => {
  await env.cleanup();
  await bus.close();
});

describe('tick Lambda', () => {
  it('enqueues a due cron fire time in PostgreSQL and Redis, and publishes work-available', async () => {
    const job = await yearlyJobDueAt(-2000);
    const result = await invoke();

    expect(result.tick).toMatchObject({ jobs: 1, created: 1, pushed: 1, pushFailed: 0 });
    expect(result.errors).toEqual([]);
    const { rows } = await env.pool.query(`SELECT id, status, trigger FROM executions WHERE job_id = $1`, [job.id]);
    expect(rows).toEqual([{ id: expect.any(String), status: 'queued', trigger: 'cron' }]);
    expect(await env.redis.zscore(env.redisQueue!.keys.lane('short').ready, rows[0].id)).not.toBeNull();
    const after = await env.store.jobGet(job.id);
    expect(after!.nextRunAt!.getTime()).toBeGreaterThan(Date.now() + 120_000);

    expect(result.wake).toEqual({
      ready: 1,
      delayed: 0,
      dueSoon: 0,
      containerSlots: 0,
      workers: 1,
      published: true,
      delivered: true,
    });
    const wake = bus.delivered.filter((e) => e.DetailType === 'work-available');
    expect(wake).toHaveLength(1);
    expect(wake[0]).toMatchObject({ EventBusName: 'jobs-test-bus', Source: 'jobs.scheduler' });
    expect(JSON.parse(wake[0]!.Detail!)).toEqual({ lanes: { short: { ready: 1, delayed: 0 } } });
    // The created transition went out on the same flush.
    expect(details('execution.transition')).toEqual([
      expect.objectContaining({
        event: 'execution.transition',
        execution_id: rows[0].id,
        from: null,
        to: 'queued',
        trigger: 'cron',
      }),
    ]);
  });

  it('wakes the workers for a fire time due before the next tick', async () => {
    await yearlyJobDueAt(30_000);
    const result = await invoke();
    expect(result.tick).toMatchObject({ created: 1, pushed: 1 });
    expect(result.wake).toMatchObject({ ready: 0, delayed: 1, dueSoon: 1, published: true });
    expect(details('work-available')).toEqual([{ lanes: { short: { ready: 0, delayed: 1 } } }]);
  });

  it('wakes one worker Lambda per WORKER_CONCURRENCY ids waiting, at most WAKE_MAX_WORKERS', async () => {
    await env.setEnv({ WORKER_CONCURRENCY: '4', WAKE_MAX_WORKERS: '5' });
    const job = await env.job({ handler: 'noop' });
    const enqueue = async (n: number, dueInMs = 0) => {
      const created = await env.store.executionsEnqueueMany({
        jobId: job.id,
        payloads: Array.from({ length: n }, () => null),
      });
      await env.queue.push(created.map((c) => ({ ...c, dueAt: new Date(Date.now() + dueInMs) })));
    };
    await enqueue(6);
    await enqueue(3, 30_000); // due within the lookahead: counted
    await enqueue(50, 3_600_000); // an hour away: not counted
    let result = await invoke();
    expect(result.wake).toMatchObject({ ready: 6, dueSoon: 3, workers: 3, published: true, delivered: true });
    expect(details('work-available')).toHaveLength(3);

    await enqueue(100);
    result = await invoke();
    expect(result.wake).toMatchObject({ ready: 106, workers: 5 });
    expect(details('work-available')).toHaveLength(3 + 5);
  });

  it('wakes no Lambda for a per-minute job when a container worker serving the short lane has room', async () => {
    // The container's heartbeat row, as functions/worker-process.ts writes it (kind container, both lanes).
    await registerWorker({
      id: 'container-1',
      kind: 'container',
      lanes: ['long', 'short'],
      concurrency: 8,
      inFlight: 0,
    });
    const job = await env.job({ cronExpr: '* * * * *', handler: 'noop' });
    await env.pool.query(`UPDATE jobs SET next_run_at = now() + interval '30 seconds' WHERE id = $1`, [job.id]);
    for (let minute = 0; minute < 3; minute++) {
      const result = await invoke();
      expect(result.wake!.dueSoon).toBeGreaterThan(0);
      expect(result.wake).toMatchObject({ containerSlots: 8, workers: 0, published: false });
    }
    expect(details('work-available')).toEqual([]);
  });

  it("wakes Lambdas only for the backlog beyond the container workers' free slots", async () => {
    await env.setEnv({ WORKER_CONCURRENCY: '4', WAKE_MAX_WORKERS: '10' });
    const jobs = { short: await env.job({ handler: 'noop' }), long: await env.job({ handler: 'noop', lane: 'long' }) };
    const enqueue = async (n: number, lane: Lane = 'short') => {
      const created = await env.store.executionsEnqueueMany({
        jobId: jobs[lane].id,
        payloads: Array.from({ length: n }, () => null),
      });
      await env.queue.push(created.map((c) => ({ ...c, dueAt: new Date() })));
    };
    await registerWorker({
      id: 'container-1',
      kind: 'container',
      lanes: ['long', 'short'],
      concurrency: 8,
      inFlight: 2,
    });
    await registerWorker({
      id: 'container-2',
      kind: 'container',
      lanes: ['long', 'short'],
      concurrency: 8,
      inFlight: 8,
    });
    // Neither a Lambda worker (it leaves soon) nor a long-only worker takes short-lane work.
    await registerWorker({ id: 'lambda-1', kind: 'lambda', lanes: ['short'], concurrency: 4, inFlight: 0 });
    await registerWorker({ id: 'container-long', kind: 'container', lanes: ['long'], concurrency: 8, inFlight: 0 });
    await enqueue(6);
    let result = await invoke();
    expect(result.wake).toMatchObject({ ready: 6, containerSlots: 6, workers: 0, published: false });

    await enqueue(14);
    result = await invoke();
    // 20 ready, 6 free slots: 14 beyond them, one Lambda per 4.
    expect(result.wake).toMatchObject({ ready: 20, containerSlots: 6, workers: 4, published: true });
    expect(details('work-available')).toHaveLength(4);

    // Long-lane work waiting takes the containers' slots first: only they can run it.
    await enqueue(5, 'long');
    result = await invoke();
    expect(result.wake).toMatchObject({ ready: 20, containerSlots: 1, workers: 5 });
  });

  it('leaves a fire time due after the next tick to that tick (a woken Lambda would only wait for it)', async () => {
    await yearlyJobDueAt(90_000);
    const result = await invoke();
    expect(result.tick).toMatchObject({ created: 1, pushed: 1 });
    expect(result.wake).toMatchObject({ delayed: 1, dueSoon: 0, published: false });
  });

  it('does not wake anyone for delayed work due after the lookahead (a retry backing off for an hour)', async () => {
    await env.queue.push([{ id: '999999', lane: 'short', priority: 0, dueAt: new Date(Date.now() + 3_600_000) }]);
    const result = await invoke();
    expect(result.wake).toMatchObject({ ready: 0, delayed: 1, dueSoon: 0, published: false });
    expect(bus.calls).toHaveLength(0);
  });

  it('publishes nothing when nothing is due', async () => {
    await yearlyJobDueAt(3_600_000);
    const result = await invoke();
    expect(result.tick).toMatchObject({ jobs: 0, created: 0 });
    expect(result.wake).toMatchObject({ published: false });
    expect(bus.calls).toHaveLength(0);
  });

  it('runs the reaper and the reconciler: an id Redis lost is pushed again', async () => {
    const job = await yearlyJobDueAt(-2000);
    await invoke();
    const { rows } = await env.pool.query(`SELECT id FROM executions WHERE job_id = $1`, [job.id]);
    await env.redis.del(env.redisQueue!.keys.lane('short').ready);
    const result = await invoke();
    expect(result.reconciled).toEqual({ scanned: 1, pushed: 1 });
    expect(result.reaped).toEqual({ expired: 0, requeued: 0, undeliverable: 0 });
    expect(await env.redis.zscore(env.redisQueue!.keys.lane('short').ready, rows[0].id)).not.toBeNull();
  });

  it('reports a Redis outage as a partial failure: rows stay queued in PostgreSQL, nothing throws', async () => {
    const job = await yearlyJobDueAt(-2000);
    await env.setEnv({ REDIS_URL: (await deadEndpoint()).replace('http:', 'redis:') });
    const result = await invoke();
    expect(result.tick).toMatchObject({ created: 1, pushed: 0, pushFailed: 1 });
    expect(result.errors.map((e) => e.step)).toEqual(expect.arrayContaining(['reap', 'reconcile', 'wake']));
    const { rows } = await env.pool.query(`SELECT status FROM executions WHERE job_id = $1`, [job.id]);
    expect(rows).toEqual([{ status: 'queued' }]);
  });

  it('fails the invocation when PostgreSQL is unreachable', async () => {
    await env.setEnv({ DATABASE_URL: (await deadEndpoint()).replace('http:', 'postgres:') + '/postgres' });
    await expect(invoke()).rejects.toThrow(/PostgreSQL is unreachable/);
  });

  it('keeps going when EventBridge is down, and says the events were not delivered', async () => {
    await yearlyJobDueAt(-2000);
    await env.setEnv({ AWS_ENDPOINT_URL_EVENTBRIDGE: await deadEndpoint() });
    const result = await handler(scheduledEvent(), lambdaContext({ functionName: 'Tick', timeoutMs: 8_000 }));
    expect(result.tick).toMatchObject({ created: 1, pushed: 1 });
    expect(result.wake).toMatchObject({ published: true, delivered: false });
    expect(result.errors.map((e) => e.step)).toContain('events');
  });

  describe('an EventBridge outage reaches the tick alarm (TickStepErrors, in the same invocation)', () => {
    /** The invocation's EMF lines, with its result. */
    const invokeCapturingEmf = async (timeoutMs = 60_000) => {
      const writes = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
      let lines: string[];
      let result;
      try {
        result = await handler(scheduledEvent(), lambdaContext({ functionName: 'Tick', timeoutMs }));
      } finally {
        lines = writes.mock.calls.flatMap(([chunk]) => String(chunk).split('\n'));
        writes.mockRestore();
      }
      const docs = lines.filter((line) => line.includes('"_aws"')).map((line) => JSON.parse(line));
      return { result: result!, fleet: docs.find((d) => d.Lane === undefined) };
    };

    it('EventBridge answers every entry with a failure', async () => {
      await env.setEnv({ METRICS_NAMESPACE: 'jobs-scheduler/test' });
      await yearlyJobDueAt(-2000);
      bus.failEntry = () => ({ ErrorCode: 'InternalFailure', ErrorMessage: 'Internal service error' });
      const { result, fleet } = await invokeCapturingEmf();
      expect(bus.calls.length).toBeGreaterThan(0);
      expect(bus.delivered).toEqual([]);
      expect(result.wake).toMatchObject({ published: true, delivered: false });
      expect(result.errors.map((e) => e.step)).toEqual(['events']);
      // What the alarm sums: the failed flush is in it, not only in the log line.
      expect(fleet.TickStepErrors).toBe(1);
    });

    it('EventBridge is unreachable (the NAT is down)', async () => {
      await env.setEnv({
        METRICS_NAMESPACE: 'jobs-scheduler/test',
        AWS_ENDPOINT_URL_EVENTBRIDGE: await deadEndpoint(),
      });
      await yearlyJobDueAt(-2000);
      const { result, fleet } = await invokeCapturingEmf(8_000);
      expect(result.errors.map((e) => e.step)).toEqual(['events']);
      expect(fleet.TickStepErrors).toBe(1);
    });

    it('a tick whose events went out reports no step error', async () => {
      await env.setEnv({ METRICS_NAMESPACE: 'jobs-scheduler/test' });
      await yearlyJobDueAt(-2000);
      const { result, fleet } = await invokeCapturingEmf();
      expect(result.wake).toMatchObject({ published: true, delivered: true });
      expect(fleet.TickStepErrors).toBe(0);
    });
  });

  it('writes the queue metrics as CloudWatch EMF lines: depth, running, oldest wait and dead-lettered per lane, finished attempts, container workers', async () => {
    await env.setEnv({ METRICS_NAMESPACE: 'jobs-scheduler/test' });
    const long = await env.job({ handler: 'noop', lane: 'long', timeoutMs: 3_600_000 });
    const created = await env.store.executionsEnqueueMany({ jobId: long.id, payloads: [null, null, null, null] });
    const [oldest, , , running] = created.map((c) => c.id);
    await env.pool.query(`UPDATE executions SET scheduled_for = now() - interval '90 seconds' WHERE id = $1`, [oldest]);
    await env.pool.query(
      `UPDATE executions SET status = 'running', lease_token = 't', worker_id = 'w', started_at = now(), lease_expires_at = now() + interval '1 minute' WHERE id = $1`,
      [running],
    );
    // A future retry is not waiting yet.
    await env.pool.query(`UPDATE executions SET scheduled_for = now() + interval '1 hour' WHERE id = $1`, [
      created[2]!.id,
    ]);
    await env.store.workerUpsert({
      id: 'container-a',
      kind: 'container',
      host: 'ip-10-0-0-1',
      startedAt: new Date(),
      lastHeartbeatAt: new Date(),
      concurrency: 8,
      inFlight: 1,
      version: 'v',
      lanes: ['long', 'short'],
    });
    await env.store.workerUpsert({
      id: 'lambda-a',
      kind: 'lambda',
      host: 'h',
      startedAt: new Date(),
      lastHeartbeatAt: new Date(),
      concurrency: 4,
      inFlight: 0,
      version: 'v',
      lanes: ['short'],
    });
    await env.redis.lpush(env.redisQueue!.keys.lane('short').dead, '901', '902');
    // Outcomes recorded in minutes now closed (as the flush statement counts them), after the totals' watermark.
    await env.pool.query(
      `UPDATE execution_totals_mark SET folded_through = date_trunc('minute', now()) - interval '1 hour'`,
    );
    await env.pool.query(
      `INSERT INTO execution_minutes (minute, status, lane, count, duration_ms)
       VALUES (date_trunc('minute', now()) - interval '5 minutes', 'succeeded', 'short', 7, 70),
              (date_trunc('minute', now()) - interval '4 minutes', 'succeeded', 'short', 3, 30),
              (date_trunc('minute', now()) - interval '4 minutes', 'dead', 'long', 2, 20),
              (date_trunc('minute', now()), 'dead', 'long', 5, 50)`,
    );

    const emf = async () => {
      const writes = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
      let lines: string[];
      let result;
      try {
        result = await invoke();
      } finally {
        lines = writes.mock.calls.flatMap(([chunk]) => String(chunk).split('\n'));
        writes.mockRestore();
      }
      return { result, docs: lines.filter((line) => line.includes('"_aws"')).map((line) => JSON.parse(line)) };
    };
    const { result, docs } = await emf();
    expect(result!.errors).toEqual([]);
    // 2 lanes, 10 (lane, status) counts, the fleet.
    expect(docs).toHaveLength(13);
    for (const doc of docs) {
      expect(doc._aws.Timestamp).toBeGreaterThan(Date.now() - 60_000);
      expect(doc._aws.CloudWatchMetrics[0].Namespace).toBe('jobs-scheduler/test');
      for (const m of doc._aws.CloudWatchMetrics[0].Metrics) expect(typeof doc[m.Name]).toBe('number');
    }
    const lane = (name: string) => docs.find((d) => d.Lane === name && d.Status === undefined);
    expect(lane('long')._aws.CloudWatchMetrics[0]).toMatchObject({
      Dimensions: [['Lane']],
      Metrics: [
        { Name: 'QueueDepth', Unit: 'Count' },
        { Name: 'RunningExecutions', Unit: 'Count' },
        { Name: 'OldestWaitingAgeSeconds', Unit: 'Seconds' },
        { Name: 'DeadLettered', Unit: 'Count' },
      ],
    });
    expect(lane('short').DeadLettered).toBe(2);
    expect(lane('long').DeadLettered).toBe(0);
    const finished = (d: { Lane: string; Status: string; AttemptsFinished: number }[]) =>
      Object.fromEntries(d.filter((x) => x.Status).map((x) => [`${x.Lane}/${x.Status}`, x.AttemptsFinished]));
    expect(docs.find((d) => d.Status === 'dead')._aws.CloudWatchMetrics[0]).toMatchObject({
      Dimensions: [['Lane', 'Status']],
      Metrics: [{ Name: 'AttemptsFinished', Unit: 'Count' }],
    });
    // The closed minutes only (the current one is folded by a later tick), each published once.
    expect(finished(docs)).toMatchObject({
      'short/succeeded': 10,
      'long/dead': 2,
      'short/dead': 0,
      'long/succeeded': 0,
      'short/failed': 0,
    });
    expect(result!.metrics!.finished).toEqual(
      expect.arrayContaining([
        { status: 'succeeded', lane: 'short', count: 10 },
        { status: 'dead', lane: 'long', count: 2 },
      ]),
    );
    const again = await emf();
    expect(Object.values(finished(again.docs)).every((n) => n === 0)).toBe(true);
    expect(lane('long')).toMatchObject({ QueueDepth: 2, RunningExecutions: 1 });
    expect(lane('long').OldestWaitingAgeSeconds).toBeGreaterThanOrEqual(89);
    expect(lane('long').OldestWaitingAgeSeconds).toBeLessThan(120);
    expect(lane('short')).toMatchObject({ QueueDepth: 0, RunningExecutions: 0, OldestWaitingAgeSeconds: 0 });
    const fleet = docs.find((d) => d.Lane === undefined);
    expect(fleet._aws.CloudWatchMetrics[0].Dimensions).toEqual([[]]);
    expect(fleet.ContainerWorkers).toBe(1);
    expect(fleet.TickStepErrors).toBe(0);
    expect(result!.metrics).toMatchObject({ containerWorkers: 1, lanes: { long: { waiting: 2, running: 1 } } });
  });

  it('writes no metric lines without METRICS_NAMESPACE', async () => {
    const writes = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    let written: string;
    try {
      const result = await invoke();
      expect(result.metrics).toBeNull();
    } finally {
      written = writes.mock.calls.map(([chunk]) => String(chunk)).join('');
      writes.mockRestore();
    }
    expect(written).not.toContain('"_aws"');
  });
});
