/**
 * The container worker (`npm run worker`, as on ECS) against a local fake of the ECS agent's scale-in protection
 * endpoint: a long-lane attempt protects the task before it runs and gives the protection up when it ends, short
 * attempts cost no call, and an agent that refuses does not stop the attempt.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createJob, triggerJob } from '@jobs/core';
import { createTestEnv, eventually, recorder, type TestEnv } from '../support/env';
import { engine } from '../support/engine';
import { jobSpec } from '../support/fixtures';
import { spawnEntry, type Child } from '../support/processes';
import { createTaskProtection } from '../../functions/task-protection';
import { startFakeAgent, type FakeAgent } from './agent-server';

let env: TestEnv;
let agent: FakeAgent;
let worker: Child | null = null;

const finished = async (id: string) => {
  const { rows } = await env.pool.query(`SELECT status, started_at FROM executions WHERE id = $1`, [id]);
  return rows[0]?.status === 'succeeded' ? rows[0] : null;
};
const puts = () => agent.requests.filter((r) => r.method === 'PUT').map((r) => r.body);

async function startWorker() {
  worker = spawnEntry('functions/worker-process.ts', {
    ...env.childEnv,
    ECS_AGENT_URI: agent.uri,
    WORKER_LANES: 'long,short',
    WORKER_CONCURRENCY: '4',
    SHUTDOWN_GRACE: '5s',
  });
  await worker.waitFor(/"worker.started"/);
}

async function trigger(overrides: Parameters<typeof jobSpec>[0], payload?: unknown) {
  const deps = engine(env).deps;
  const job = await createJob(deps, jobSpec(overrides));
  return (await triggerJob(deps, { jobId: job.id, payload })).execution.id;
}

beforeAll(async () => {
  env = await createTestEnv('ecsprot');
});
afterEach(async () => {
  if (worker) {
    worker.kill('SIGTERM');
    await worker.exited;
    worker = null;
  }
  await agent.close();
});
afterAll(async () => {
  await env.cleanup();
});

describe('container worker with ECS task scale-in protection', () => {
  it('protects the task while a long-lane attempt runs, for its timeout, and gives it up after', async () => {
    agent = await startFakeAgent();
    await startWorker();
    const id = await trigger({ handler: 'sleep', lane: 'long', timeoutMs: 3_600_000 }, { ms: 1500 });
    await eventually(() => agent.state.enabled, 15_000);
    expect(puts()).toEqual([{ ProtectionEnabled: true, ExpiresInMinutes: 62 }]);
    // Protected before the attempt ran to its end.
    expect(await finished(id)).toBeNull();

    await eventually(() => finished(id), 15_000);
    await eventually(() => !agent.state.enabled, 5_000);
    expect(puts()).toEqual([{ ProtectionEnabled: true, ExpiresInMinutes: 62 }, { ProtectionEnabled: false }]);
    const [enabled, disabled] = agent.requests.filter((r) => r.method === 'PUT');
    expect(disabled!.at).toBeGreaterThan(enabled!.at + 1400);
    expect(agent.requests.every((r) => r.path === '/v1/abc123/task-protection/v1/state')).toBe(true);
  });

  it('makes no call for attempts that finish within the stop grace', async () => {
    agent = await startFakeAgent();
    await startWorker();
    const ids = await Promise.all([1, 2, 3].map(() => trigger({ handler: 'noop', timeoutMs: 5_000 })));
    for (const id of ids) await eventually(() => finished(id), 15_000);
    expect(agent.requests).toEqual([]);
  });

  it('runs the attempt anyway when the agent refuses, and logs why', async () => {
    agent = await startFakeAgent();
    agent.failWith = 'TASK_NOT_VALID';
    await startWorker();
    const id = await trigger({ handler: 'sleep', lane: 'long', timeoutMs: 3_600_000 }, { ms: 100 });
    await eventually(() => finished(id), 15_000);
    await worker!.waitFor(/"worker.task_protection_failed".*TASK_NOT_VALID/);
    expect(agent.state.enabled).toBe(false);
  });
});

describe('createTaskProtection', () => {
  it('holds the protection for the latest deadline of overlapping attempts, with one call per change', async () => {
    agent = await startFakeAgent();
    const rec = recorder();
    let now = 1_000_000;
    const protection = createTaskProtection({ agentUri: agent.uri, logger: rec.logger, now: () => now });
    await Promise.all([protection.hold('a', now + 30 * 60_000), protection.hold('b', now + 10 * 60_000)]);
    // Both held before the first answer: the first call covers a, the second needs nothing.
    expect(puts()).toEqual([{ ProtectionEnabled: true, ExpiresInMinutes: 30 }]);
    now += 60_000;
    await protection.hold('c', now + 90 * 60_000);
    expect(puts().at(-1)).toEqual({ ProtectionEnabled: true, ExpiresInMinutes: 90 });
    await protection.release('a');
    await protection.release('c');
    expect(agent.state.enabled).toBe(true);
    await protection.release('b');
    expect(puts().at(-1)).toEqual({ ProtectionEnabled: false });
    expect(protection.protectedUntil).toBeNull();
    // An unknown id changes nothing.
    await protection.release('b');
    expect(puts()).toHaveLength(3);
  });

  it('caps the protection at the 48 hours ECS allows', async () => {
    agent = await startFakeAgent();
    const protection = createTaskProtection({ agentUri: agent.uri, logger: recorder().logger });
    await protection.hold('a', Date.now() + 72 * 3_600_000);
    expect(puts()).toEqual([{ ProtectionEnabled: true, ExpiresInMinutes: 2880 }]);
    await protection.release('a');
  });
});
