import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJob, triggerJob, cancelExecution, replayExecution } from '@jobs/core';
import { createTestEnv, eventually, type TestEnv } from './support/env';
import { engine } from './support/engine';
import { leasesLeft } from './support/queue-probe';
import { jobSpec } from './support/fixtures';

let env: TestEnv;
let e: ReturnType<typeof engine>;

beforeEach(async () => {
  env = await createTestEnv('engine');
  e = engine(env);
});
afterEach(async () => {
  await e.stopAll();
  await env.cleanup();
});

const statusOf = async (id: string) => (await env.store.executionGet(id))?.status;

describe('execution lifecycle', () => {
  it('runs a triggered shell command and records its output, exit code and duration', async () => {
    const job = await createJob(e.deps, jobSpec({ handler: null, command: 'echo hello; echo oops >&2' }));
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    await e.worker();
    await eventually(async () => (await statusOf(execution.id)) === 'succeeded');
    const done = await env.store.executionGet(execution.id);
    expect(done).toMatchObject({ status: 'succeeded', exitCode: 0, attempt: 1, error: null });
    expect(done!.output).toContain('hello');
    expect(done!.output).toContain('oops');
    expect(done!.durationMs).toBeGreaterThanOrEqual(0);
    expect(done!.workerId).toMatch(/^test-/);
    expect(e.transitions.filter((t) => t.executionId === execution.id).map((t) => `${t.from}->${t.to}`)).toEqual([
      'null->queued',
      'queued->running',
      'running->succeeded',
    ]);
    // Nothing left in Redis for it.
    const depth = await env.queue.depth();
    expect(depth.short).toEqual({ ready: 0, delayed: 0, running: 0, dead: 0 });
  });

  it('retries a failing command with growing delays and dead-letters it after max_retries', async () => {
    const job = await createJob(
      e.deps,
      jobSpec({
        handler: null,
        command: 'exit 3',
        maxRetries: 2,
        backoff: { baseMs: 200, factor: 2, maxMs: 10_000, jitter: 'none' },
      }),
    );
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    await e.worker();
    const chain = await eventually(async () => {
      const list = await env.store.executionList({ jobId: job.id, limit: 10 });
      return list.length === 3 && list.every((x) => ['failed', 'dead'].includes(x.status)) ? list.reverse() : null;
    });
    expect(chain.map((x) => [x.attempt, x.status, x.trigger, x.exitCode])).toEqual([
      [1, 'failed', 'manual', 3],
      [2, 'failed', 'retry', 3],
      [3, 'dead', 'retry', 3],
    ]);
    expect(chain[1]!.retryOf).toBe(execution.id);
    expect(chain[2]!.rootId).toBe(execution.id);
    // Delays grow: attempt 2 waited >= 200 ms after attempt 1 ended, attempt 3 >= 400 ms after attempt 2.
    const gap1 = chain[1]!.startedAt!.getTime() - chain[0]!.finishedAt!.getTime();
    const gap2 = chain[2]!.startedAt!.getTime() - chain[1]!.finishedAt!.getTime();
    expect(gap1).toBeGreaterThanOrEqual(190);
    expect(gap2).toBeGreaterThanOrEqual(390);
    expect(await env.queue.deadIds('short')).toEqual([chain[2]!.id]);
  });

  it('kills a command that exceeds its timeout, including its children, and counts it as a failure', async () => {
    const job = await createJob(
      e.deps,
      jobSpec({ handler: null, command: 'sleep 30 & sleep 30; echo never', timeoutMs: 300, maxRetries: 0 }),
    );
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    await e.worker();
    await eventually(async () => (await statusOf(execution.id)) === 'dead');
    const done = await env.store.executionGet(execution.id);
    expect(done!.error).toMatch(/timed out after 300 ms/);
    expect(done!.durationMs).toBeLessThan(5000);
  });

  it('caps captured output and marks the truncation', async () => {
    const job = await createJob(e.deps, jobSpec({ handler: null, command: 'head -c 200000 /dev/zero | tr "\\0" a' }));
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    await e.worker();
    await eventually(async () => (await statusOf(execution.id)) === 'succeeded');
    const done = await env.store.executionGet(execution.id);
    expect(done!.output!.length).toBeLessThan(64 * 1024 + 200);
    expect(done!.output).toMatch(/^a{32768}\n\[… 134464 bytes of output dropped …\]\na{32768}$/);
  });

  it('does not let a slow job block the others', async () => {
    const slow = await createJob(e.deps, jobSpec({ handler: 'sleep', payload: { ms: 3000 } }));
    const fast = await createJob(e.deps, jobSpec({ handler: 'noop' }));
    await e.worker({ concurrency: 2 });
    const s = await triggerJob(e.deps, { jobId: slow.id });
    await eventually(async () => (await statusOf(s.execution.id)) === 'running');
    const f = await triggerJob(e.deps, { jobId: fast.id });
    await eventually(async () => (await statusOf(f.execution.id)) === 'succeeded', 2000);
    expect(await statusOf(s.execution.id)).toBe('running');
  });

  it('runs as many attempts at once as its concurrency, even when they are claimed one by one', async () => {
    const job = await createJob(e.deps, jobSpec({ handler: 'sleep', payload: { ms: 1500 } }));
    const worker = await e.worker({ concurrency: 8 });
    for (let i = 0; i < 8; i++) {
      await triggerJob(e.deps, { jobId: job.id });
      await new Promise((r) => setTimeout(r, 30)); // arrive one at a time, each claimed alone
    }
    await eventually(() => worker.inFlight === 8, 1000);
    const { rows } = await env.pool.query(`SELECT count(*)::int AS n FROM executions WHERE status = 'running'`);
    expect(rows[0].n).toBe(8);
  });

  it('claims once per arrival when work trickles in: no empty claim after one that emptied the ready set', async () => {
    // Counts calls on our own queue port; Redis underneath is real.
    let claims = 0;
    const queue = new Proxy(env.queue, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'claim') return typeof value === 'function' ? value.bind(target) : value;
        return (...args: Parameters<typeof env.queue.claim>) => {
          claims++;
          return target.claim(...args);
        };
      },
    });
    const counted = engine({ ...env, queue });
    try {
      const job = await createJob(e.deps, jobSpec({ handler: 'sleep', payload: { ms: 3000 } }));
      const worker = await counted.worker({ concurrency: 8, lanes: ['short', 'long'], pollMs: 10_000 });
      await eventually(() => claims === 2, 1000); // the first, empty, claims at start: one per lane
      for (let i = 0; i < 8; i++) {
        await triggerJob(e.deps, { jobId: job.id });
        await eventually(() => worker.inFlight === i + 1, 1000); // each claimed alone
      }
      // One claim per trigger, of the lane the push woke the worker for; the marker a push sets is cleared by the
      // claim that took its id.
      expect(claims).toBe(10);
      // A push still wakes the blocked worker at once (above: each started within a second, pollMs is 10 s), and
      // the next one is claimed as soon as a slot frees.
      if (env.redisQueue) expect(await env.redis.zscore(env.redisQueue.keys.lane('short').marker, 'm')).toBeNull();
    } finally {
      await counted.stopAll(0);
    }
  });

  it("says which lane's push ended a wait, and null when it timed out", async () => {
    expect(await env.queue.waitForWork(['short', 'long'], 50)).toBeNull();
    const job = await createJob(e.deps, jobSpec({ handler: 'noop', lane: 'long' }));
    const waiting = env.queue.waitForWork(['short', 'long'], 5000);
    await new Promise((r) => setTimeout(r, 50));
    await triggerJob(e.deps, { jobId: job.id });
    expect(await waiting).toBe('long');
  });

  it('still claims another lane promptly while one lane keeps the worker busy', async () => {
    const busy = await createJob(e.deps, jobSpec({ handler: 'sleep', payload: { ms: 20 } }));
    const other = await createJob(e.deps, jobSpec({ handler: 'noop', lane: 'long' }));
    const created = await env.store.executionsEnqueueMany({
      jobId: busy.id,
      payloads: Array.from({ length: 600 }, () => null),
    });
    await env.queue.push(created);
    await e.worker({ concurrency: 10, lanes: ['short', 'long'], pollMs: 10_000 });
    await new Promise((r) => setTimeout(r, 200));
    const { execution } = await triggerJob(e.deps, { jobId: other.id });
    await eventually(async () => (await statusOf(execution.id)) === 'succeeded', 5000);
    // It ran while the short lane still had most of its backlog waiting.
    const { rows } = await env.pool.query(
      `SELECT count(*)::int AS n FROM executions WHERE job_id = $1 AND status = 'queued'`,
      [busy.id],
    );
    expect(rows[0].n).toBeGreaterThan(300);
  });

  it('leaves no lease behind when heartbeats race with acknowledgements', async () => {
    const job = await createJob(e.deps, jobSpec({ handler: 'noop' }));
    const created = await env.store.executionsEnqueueMany({
      jobId: job.id,
      payloads: Array.from({ length: 3000 }, () => null),
    });
    await env.queue.push(created);
    // A heartbeat every 5 ms: constantly in flight while batches of outcomes are written and acknowledged.
    await e.worker({ concurrency: 50, heartbeatMs: 5 });
    await eventually(async () => {
      const { rows } = await env.pool.query(`SELECT count(*)::int AS n FROM executions WHERE status = 'succeeded'`);
      return rows[0].n === 3000;
    }, 20_000);
    await e.stopAll();
    expect(await leasesLeft(env, 'short')).toBe(0);
  });

  it('cancels a queued attempt and a running one (killing its command)', async () => {
    const job = await createJob(e.deps, jobSpec({ handler: null, command: 'sleep 20' }));
    const queued = await triggerJob(e.deps, { jobId: job.id });
    expect((await cancelExecution(e.deps, queued.execution.id)).cancelled).toBe(true);
    expect((await env.queue.depth()).short.ready).toBe(0);

    const worker = await e.worker();
    const running = await triggerJob(e.deps, { jobId: job.id });
    await eventually(async () => (await statusOf(running.execution.id)) === 'running');
    // Cancels reach the worker through its heartbeat here (no pub/sub subscription in this in-process worker).
    await cancelExecution(e.deps, running.execution.id);
    await worker.heartbeat();
    await eventually(() => worker.inFlight === 0, 5000);
    const done = await env.store.executionGet(running.execution.id);
    expect(done).toMatchObject({ status: 'cancelled', error: 'cancelled by request' });
    expect(await cancelExecution(e.deps, running.execution.id)).toEqual({ cancelled: false, status: 'cancelled' });
  });

  it('replays a dead execution as a new attempt chain and clears it from the dead-letter list', async () => {
    let calls = 0;
    const job = await createJob(e.deps, jobSpec({ handler: 'flaky', maxRetries: 0 }));
    await e.worker({
      handlers: {
        flaky: () => {
          if (calls++ === 0) throw new Error('first call fails');
          return 'ok';
        },
      },
    });
    const { execution } = await triggerJob(e.deps, { jobId: job.id, payload: { n: 1 } });
    await eventually(async () => (await statusOf(execution.id)) === 'dead');
    // The queue is settled right after the outcome is written.
    await eventually(async () => (await env.queue.deadIds('short')).length > 0);
    expect(await env.queue.deadIds('short')).toEqual([execution.id]);
    const replay = await replayExecution(e.deps, execution.id);
    expect(replay.execution).toMatchObject({ trigger: 'replay', attempt: 1 });
    await eventually(async () => (await statusOf(replay.execution!.id)) === 'succeeded');
    const again = await env.store.executionGet(replay.execution!.id);
    expect(again).toMatchObject({ retryOf: execution.id, payload: { n: 1 }, output: 'ok' });
    expect(await env.queue.deadIds('short')).toEqual([]);
    expect((await replayExecution(e.deps, replay.execution!.id)).execution).toBeNull();
  });

  it('returns the same execution for a repeated idempotency key', async () => {
    const job = await createJob(e.deps, jobSpec());
    const first = await triggerJob(e.deps, { jobId: job.id, idempotencyKey: 'abc' });
    const second = await triggerJob(e.deps, { jobId: job.id, idempotencyKey: 'abc' });
    expect(first.created).toBe(true);
    expect(second.created).toBe(false);
    expect(second.execution).toEqual(first.execution);
    expect(second.record.id).toBe(first.record.id);
  });
});
