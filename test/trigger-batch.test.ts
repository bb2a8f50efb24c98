/** Concurrent manual triggers share statements (packages/store/src/trigger-batch.ts), against the real PostgreSQL. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJob, deleteJob } from '@jobs/core';
import { createStore } from '@jobs/store';
import { createTestEnv, type TestEnv } from './support/env';
import { engine } from './support/engine';
import { jobSpec } from './support/fixtures';

let env: TestEnv;
let e: ReturnType<typeof engine>;
/** Statement names sent through the pool (a pass-through count; pg itself is untouched). */
let sent: string[];

beforeEach(async () => {
  env = await createTestEnv('trigger_batch');
  e = engine(env);
  sent = [];
  const query = env.pool.query.bind(env.pool) as (...args: unknown[]) => unknown;
  (env.pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const config = args[0] as { name?: string } | string;
    sent.push(typeof config === 'object' && config.name ? config.name : 'other');
    return query(...args);
  };
});
afterEach(async () => {
  await e.stopAll();
  await env.cleanup();
});

describe('batched manual triggers', () => {
  it('gives each of many concurrent triggers its own row, payload and answer, in far fewer statements', async () => {
    const store = createStore(env.pool);
    const [a, b, gone] = await Promise.all(
      [1, 2, 3].map((i) => createJob(e.deps, jobSpec({ name: `job-${i}`, handler: 'noop' }))),
    );
    await deleteJob(e.deps, gone!.id);
    sent = [];
    const inputs = Array.from({ length: 120 }, (_, i) => ({
      jobId: [a!.id, b!.id, gone!.id, '999999'][i % 4]!,
      payload: i % 5 === 0 ? null : { i, text: `payload ${i} ✓` },
      idempotencyKey: null,
    }));
    const results = await Promise.all(inputs.map((input) => store.executionTrigger(input)));

    for (const [i, input] of inputs.entries()) {
      const result = results[i];
      if (input.jobId === gone!.id || input.jobId === '999999') {
        expect(result, `trigger ${i}`).toBeNull();
        continue;
      }
      expect(result).toMatchObject({
        created: true,
        record: { jobId: input.jobId, status: 'queued', trigger: 'manual', attempt: 1 },
      });
      expect(result!.record.payload).toEqual(input.payload);
      expect((await env.store.executionGet(result!.execution.id))!.payload).toEqual(input.payload);
    }
    const ids = results.filter(Boolean).map((r) => r!.execution.id);
    expect(new Set(ids).size).toBe(60);
    const { rows } = await env.pool.query(`SELECT count(*)::int AS n FROM executions`);
    expect(rows[0].n).toBe(60);
    // 120 triggers went out in a handful of batch statements.
    const batches = sent.filter((name) => name === 'execution_trigger_batch').length;
    expect(batches).toBeGreaterThan(0);
    expect(batches).toBeLessThan(10);
  });

  it('answers repeated idempotency keys with one execution, within a batch and across batches', async () => {
    const store = createStore(env.pool);
    const job = await createJob(e.deps, jobSpec({ handler: 'noop' }));
    const earlier = await store.executionTrigger({ jobId: job.id, payload: { first: true }, idempotencyKey: 'old' });
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        store.executionTrigger({
          jobId: job.id,
          payload: { i },
          idempotencyKey: i % 3 === 0 ? 'old' : i % 3 === 1 ? 'new' : null,
        }),
      ),
    );
    const old = results.filter((_, i) => i % 3 === 0);
    expect(old.every((r) => r!.execution.id === earlier!.execution.id && !r!.created)).toBe(true);
    const fresh = results.filter((_, i) => i % 3 === 1);
    expect(new Set(fresh.map((r) => r!.execution.id)).size).toBe(1);
    expect(fresh.filter((r) => r!.created)).toHaveLength(1);
    const plain = results.filter((_, i) => i % 3 === 2);
    expect(plain.every((r) => r!.created)).toBe(true);
    const { rows } = await env.pool.query(`SELECT count(*)::int AS n FROM executions`);
    expect(rows[0].n).toBe(1 + 1 + 10);
  });

  it('fails only the trigger PostgreSQL refuses, not the others that shared its statement', async () => {
    const store = createStore(env.pool);
    const job = await createJob(e.deps, jobSpec({ handler: 'noop' }));
    // jsonb cannot hold U+0000: the batch statement fails, and each trigger is then tried on its own.
    const outcomes = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        store.executionTrigger({ jobId: job.id, payload: i === 5 ? 'a\u0000b' : { i }, idempotencyKey: null }),
      ),
    );
    expect(outcomes.map((o) => o.status)).toEqual(
      Array.from({ length: 12 }, (_, i) => (i === 5 ? 'rejected' : 'fulfilled')),
    );
    const { rows } = await env.pool.query(`SELECT count(*)::int AS n FROM executions`);
    expect(rows[0].n).toBe(11);
  });
});
