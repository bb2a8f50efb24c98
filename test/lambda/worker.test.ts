/** functions/worker.ts invoked with the bus rule's `work-available` event, against real PostgreSQL and Redis. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cancelExecution, triggerJob } from '@jobs/core';
import { recordRelease } from '@jobs/store';
import { handler } from '../../functions/worker';
import { lambdaContext, workAvailableEvent } from '../fixtures/events';
import { eventually } from '../support/env';
import { lambdaTestEnv, sleep, type LambdaTestEnv } from './harness';
import { deadEndpoint, startPutEventsServer, type PutEventsServer } from './put-events-server';

let env: LambdaTestEnv;
let bus: PutEventsServer;

const invoke = (context = lambdaContext({ functionName: 'Worker', timeoutMs: 900_000 })) =>
  handler(workAvailableEvent(), context);
const trigger = (jobId: string) => triggerJob(env.engine.deps, { jobId });
const statuses = async (where: string, params: unknown[]) =>
  (
    await env.pool.query(
      `SELECT status, count(*)::int AS n FROM executions WHERE ${where} GROUP BY status ORDER BY status`,
      params,
    )
  ).rows;

beforeEach(async () => {
  bus = await startPutEventsServer();
  env = await lambdaTestEnv('lworker', {
    ...bus.env(),
    EVENT_BUS_NAME: 'jobs-test-bus',
    EVENT_TRANSITIONS: 'all',
    WORKER_CONCURRENCY: '4',
  });
});
afterEach(async () => {
  await env.cleanup();
  await bus.close();
});

describe('worker Lambda', () => {
  it('drains queued short-lane executions to succeeded, deregisters, and has published their transitions on return', async () => {
    const job = await env.job({ handler: 'noop' });
    const ids = [];
    for (let i = 0; i < 20; i++) ids.push((await trigger(job.id)).execution.id);
    const context = lambdaContext({ functionName: 'Worker', timeoutMs: 900_000 });

    const result = await invoke(context);

    expect(context.callbackWaitsForEmptyEventLoop).toBe(false);
    expect(result).toMatchObject({
      claimed: 20,
      started: 20,
      succeeded: 20,
      failed: 0,
      rejected: 0,
      released: 0,
      stoppedBy: 'idle',
    });
    expect(result.workerId).toMatch(/^lambda-/);
    expect(await statuses('job_id = $1', [job.id])).toEqual([{ status: 'succeeded', n: 20 }]);
    const { rows } = await env.pool.query(`SELECT DISTINCT worker_id FROM executions WHERE job_id = $1`, [job.id]);
    expect(rows).toEqual([{ worker_id: result.workerId }]);
    expect((await env.queue.depth()).short).toEqual({ ready: 0, delayed: 0, running: 0, dead: 0 });
    expect((await env.pool.query(`SELECT 1 FROM workers WHERE id = $1`, [result.workerId])).rowCount).toBe(0);
    // Flushed before returning: a frozen container must not sit on the outcomes' events.
    const succeeded = bus.delivered.map((e) => JSON.parse(e.Detail!)).filter((d) => d.to === 'succeeded');
    expect(succeeded.map((d) => d.execution_id).sort()).toEqual([...ids].sort());
  });

  it('of an older release finishes what it runs, claims nothing more once the newer release serves the lane', async () => {
    await env.setEnv({ RELEASE_ID: 'lambda-r1', LEASE_TIMEOUT: '3s' });
    await recordRelease(env.pool, 'lambda-r1');
    const job = await env.job({ handler: 'sleep', payload: { ms: 2_500 }, timeoutMs: 10_000 });
    const first = (await trigger(job.id)).execution.id;
    const invocation = invoke();
    await eventually(
      async () =>
        (await env.pool.query(`SELECT 1 FROM executions WHERE id = $1 AND status = 'running'`, [first])).rowCount,
      5_000,
    );
    // The deploy records a newer release, and a worker of it (a new container) runs the short lane.
    await recordRelease(env.pool, 'lambda-r2');
    await env.store.workerUpsert({
      id: 'container-r2',
      kind: 'container',
      host: 'h',
      startedAt: new Date(),
      lastHeartbeatAt: new Date(),
      concurrency: 1,
      inFlight: 0,
      version: 'v',
      lanes: ['short', 'long'],
      release: 'lambda-r2',
    });
    await sleep(1_200);
    const later = (await trigger(job.id)).execution.id;
    const result = await invocation;
    expect(result).toMatchObject({ stoppedBy: 'release', claimed: 1, succeeded: 1, released: 0 });
    expect(await statuses('id = $1', [first])).toEqual([{ status: 'succeeded', n: 1 }]);
    // Left for the newer release's workers.
    expect(await statuses('id = $1', [later])).toEqual([{ status: 'queued', n: 1 }]);
  });

  it('stops claiming once its remaining time falls below SHORT_LANE_MAX_TIMEOUT + margin, and leaves nothing it claimed unfinished', async () => {
    // 12 s left, 10 s longest attempt, 1 s margin: claiming stops after about 1 s.
    await env.setEnv({ SHORT_LANE_MAX_TIMEOUT: '10s', SHUTDOWN_GRACE: '1s' });
    const job = await env.job({ handler: 'sleep', payload: { ms: 300 }, timeoutMs: 10_000 });
    let producing = true;
    const producer = (async () => {
      while (producing) {
        await trigger(job.id);
        await sleep(40);
      }
    })();
    const context = lambdaContext({ functionName: 'Worker', timeoutMs: 12_000 });
    const startedAt = Date.now();

    const result = await invoke(context);
    const returnedAt = Date.now();
    producing = false;
    await producer;

    expect(result.stoppedBy).toBe('budget');
    expect(result.claimUntilRemainingMs).toBe(11_000);
    expect(result.claimed).toBeGreaterThan(0);
    // Returned with most of its time left: stopped claiming at ~1 s and finished the last 300 ms attempts.
    expect(returnedAt - startedAt).toBeLessThan(3_000);
    expect(result.remainingMs).toBeGreaterThan(9_000);
    // Everything it claimed is recorded as finished; nothing of it is running or leased.
    expect(await statuses('worker_id = $1', [result.workerId])).toEqual([{ status: 'succeeded', n: result.succeeded }]);
    expect(result.succeeded).toBe(result.claimed);
    expect((await env.queue.depth()).short.running).toBe(0);
    const { rows } = await env.pool.query(`SELECT max(started_at) AS last FROM executions WHERE worker_id = $1`, [
      result.workerId,
    ]);
    expect(rows[0].last.getTime() - startedAt).toBeLessThan(1_500);
    // What arrived later waits, queued, for the next worker.
    const waiting = await statuses(`job_id = $1 AND worker_id IS NULL`, [job.id]);
    expect(waiting).toEqual([{ status: 'queued', n: expect.any(Number) }]);
  });

  it('gives an attempt that overruns the short-lane limit back to the queue before the invocation ends', async () => {
    // Claims for 2 s of a 4 s invocation; a 10 s job (over the limit: it belonged on the long lane) is still running
    // when 1 s is left, so it is released as the same attempt instead of being frozen mid-run.
    await env.setEnv({ SHORT_LANE_MAX_TIMEOUT: '1s', SHUTDOWN_GRACE: '1s' });
    const job = await env.job({ handler: 'sleep', payload: { ms: 10_000 }, timeoutMs: 10_000 });
    const { execution } = await trigger(job.id);
    const result = await invoke(lambdaContext({ functionName: 'Worker', timeoutMs: 4_000 }));
    expect(result).toMatchObject({ claimed: 1, succeeded: 0, released: 1, stoppedBy: 'budget' });
    expect(result.remainingMs).toBeGreaterThan(0);
    const row = await env.store.executionGet(execution.id);
    expect(row).toMatchObject({ status: 'queued', attempt: 1 });
    expect((await env.queue.depth()).short).toMatchObject({ ready: 1, running: 0 });
  });

  it('never claims long-lane work, even when WORKER_LANES lists it', async () => {
    await env.setEnv({ WORKER_LANES: 'long,short' });
    const job = await env.job({ handler: 'noop', lane: 'long' });
    const { execution } = await trigger(job.id);
    const startedAt = Date.now();
    const result = await invoke();
    expect(result).toMatchObject({ claimed: 0, stoppedBy: 'idle' });
    // Idle exit after about 2 s: a woken Lambda does not bill for waiting.
    expect(Date.now() - startedAt).toBeLessThan(4_000);
    expect((await env.store.executionGet(execution.id))!.status).toBe('queued');
    expect((await env.queue.depth()).long.ready).toBe(1);
  });

  it('does not claim at all when the invocation is shorter than SHORT_LANE_MAX_TIMEOUT + margin', async () => {
    const job = await env.job({ handler: 'noop' });
    await trigger(job.id);
    const result = await invoke(lambdaContext({ functionName: 'Worker', timeoutMs: 60_000 }));
    expect(result).toMatchObject({ workerId: null, claimed: 0, stoppedBy: 'no-budget' });
    expect((await env.queue.depth()).short.ready).toBe(1);
  });

  it('kills a running attempt when it is cancelled (through the container’s cancel subscription)', async () => {
    const job = await env.job({ handler: 'sleep', payload: { ms: 20_000 }, timeoutMs: 30_000 });
    const { execution } = await trigger(job.id);
    const running = invoke();
    await eventually(async () => (await env.store.executionGet(execution.id))!.status === 'running', 5_000);
    const cancelledAt = Date.now();
    await cancelExecution(env.engine.deps, execution.id);
    const result = await running;
    expect(Date.now() - cancelledAt).toBeLessThan(5_000);
    expect(result).toMatchObject({ claimed: 1, succeeded: 0 });
    expect((await env.store.executionGet(execution.id))!.status).toBe('cancelled');
  });

  it('keeps running jobs when EventBridge is down, and returns without waiting for it', async () => {
    await env.setEnv({ AWS_ENDPOINT_URL_EVENTBRIDGE: await deadEndpoint() });
    const job = await env.job({ handler: 'noop' });
    for (let i = 0; i < 5; i++) await trigger(job.id);
    const startedAt = Date.now();
    const result = await invoke();
    expect(result).toMatchObject({ claimed: 5, succeeded: 5 });
    expect(Date.now() - startedAt).toBeLessThan(2_000 + 5_000 + 1_000);
    expect(await statuses('job_id = $1', [job.id])).toEqual([{ status: 'succeeded', n: 5 }]);
  });

  it('waits for delayed work due before the next tick instead of returning after IDLE_EXIT_MS', async () => {
    const job = await env.job({ handler: 'noop' });
    const [created] = await env.store.executionsEnqueueMany({ jobId: job.id, payloads: [null] });
    const dueAt = Date.now() + 4_000;
    await env.queue.push([{ ...created!, dueAt: new Date(dueAt) }]);
    const result = await invoke();
    expect(result).toMatchObject({ claimed: 1, succeeded: 1, stoppedBy: 'idle' });
    const { rows } = await env.pool.query(`SELECT status, started_at FROM executions WHERE id = $1`, [created!.id]);
    expect(rows[0].status).toBe('succeeded');
    expect(new Date(rows[0].started_at).getTime()).toBeGreaterThanOrEqual(dueAt - 50);
  });

  it('returns after IDLE_EXIT_MS when the next delayed work is due after the next tick', async () => {
    await env.setEnv({ SCHEDULE_INTERVAL: '1s', LOOKAHEAD: '5s' });
    const job = await env.job({ handler: 'noop' });
    const [created] = await env.store.executionsEnqueueMany({ jobId: job.id, payloads: [null] });
    await env.queue.push([{ ...created!, dueAt: new Date(Date.now() + 60_000) }]);
    const started = Date.now();
    const result = await invoke();
    expect(result).toMatchObject({ claimed: 0, stoppedBy: 'idle' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });
  it('waits only for delayed work due before the next tick after its start: a job due every few seconds does not keep it alive', async () => {
    // Next tick 1 s away, so the wait is bounded 6 s after the start (SCHEDULE_INTERVAL + 5 s). Fire times every
    // 3 s stand for a per-minute job: a window re-evaluated on every loop would always see the next one.
    await env.setEnv({ SCHEDULE_INTERVAL: '1s', LOOKAHEAD: '5s' });
    const job = await env.job({ handler: 'noop' });
    const created = await env.store.executionsEnqueueMany({ jobId: job.id, payloads: [null, null, null, null, null] });
    const started = Date.now();
    await env.queue.push(created.map((c, i) => ({ ...c, dueAt: new Date(started + 1_500 + i * 3_000) })));
    const result = await invoke();
    const returnedAt = Date.now();
    // The ones due at 1.5 s and 4.5 s, then 2 s idle: gone before the one due at 7.5 s.
    expect(result).toMatchObject({ claimed: 2, succeeded: 2, stoppedBy: 'idle' });
    expect(returnedAt - started).toBeLessThan(7_500);
    expect((await env.queue.depth()).short).toMatchObject({ delayed: 3, running: 0 });
  });
});
