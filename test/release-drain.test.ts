/**
 * Release drain (issue #26): the deploy's migration step records a release, and a worker of an older release, once
 * the newer release's workers serve its lanes, stops claiming, finishes what it runs (or hands it back at its grace
 * when stopped meanwhile) and exits 0, while the newer worker takes the work. Real worker processes
 * (`functions/worker-process.ts`, the container worker), on both queue backends (test/vitest.config.ts).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createJob, triggerJob, type WorkerInfo } from '@jobs/core';
import { currentRelease, recordRelease } from '@jobs/store';
import { createTestEnv, eventually, type TestEnv } from './support/env';
import { engine } from './support/engine';
import { jobSpec } from './support/fixtures';
import { spawnEntry, type Child } from './support/processes';

let env: TestEnv;
const children: Child[] = [];

beforeAll(async () => {
  env = await createTestEnv('release');
});
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill('SIGKILL');
    await child.exited;
  }
});
afterAll(async () => {
  await env.cleanup();
});

/** A container worker of `release`; resolves with it and its worker id once it claims. */
async function startWorker(release: string, extra: Record<string, string> = {}) {
  const child = spawnEntry('functions/worker-process.ts', {
    ...env.childEnv,
    RELEASE_ID: release,
    WORKER_LANES: 'long,short',
    WORKER_CONCURRENCY: '4',
    // Heartbeats (a third of the lease) every second: a worker learns of a newer release within about a second.
    LEASE_TIMEOUT: '3s',
    SHUTDOWN_GRACE: '30s',
    ...extra,
  });
  children.push(child);
  const line = await child.waitFor(/"worker.started"/);
  return { child, id: JSON.parse(line).worker_id as string };
}

async function trigger(overrides: Parameters<typeof jobSpec>[0], payload?: unknown) {
  const deps = engine(env).deps;
  const job = await createJob(deps, jobSpec(overrides));
  return (await triggerJob(deps, { jobId: job.id, payload })).execution.id;
}

async function row(id: string) {
  const { rows } = await env.pool.query(
    `SELECT status, worker_id, attempt, finished_at, (SELECT count(*)::int FROM executions x WHERE x.job_id = e.job_id) AS attempts
     FROM executions e WHERE id = $1`,
    [id],
  );
  return rows[0] as {
    status: string;
    worker_id: string | null;
    attempt: number;
    finished_at: Date | null;
    attempts: number;
  };
}

const succeeded = async (id: string) => ((await row(id)).status === 'succeeded' ? row(id) : null);

/** Starts logged per execution id, over the output of every worker. */
function startsById(...workers: Child[]): Map<string, number> {
  const starts = new Map<string, number>();
  for (const worker of workers)
    for (const line of worker.output().split('\n')) {
      if (!line.includes('"execution.transition"') || !line.includes('"to":"running"')) continue;
      const id = JSON.parse(line).execution_id as string;
      starts.set(id, (starts.get(id) ?? 0) + 1);
    }
  return starts;
}

describe('release drain with real worker processes', () => {
  it('lets the old worker finish its long attempt and exit 0 while the newer worker takes new work', async () => {
    await recordRelease(env.pool, 'r1');
    const old = await startWorker('r1');
    const long = await trigger({ handler: 'sleep', lane: 'long', timeoutMs: 60_000 }, { ms: 15_000 });
    await eventually(async () => (await row(long)).status === 'running', 15_000);

    // A newer release recorded, but none of its workers runs yet: the old worker keeps claiming.
    await recordRelease(env.pool, 'r2');
    expect(await currentRelease(env.pool)).toBe('r2');
    const meanwhile = await trigger({ handler: 'noop' });
    expect((await eventually(() => succeeded(meanwhile), 15_000)).worker_id).toBe(old.id);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(old.child.output()).not.toContain('"worker.superseded"');

    const next = await startWorker('r2');
    const superseded = JSON.parse(await old.child.waitFor(/"worker.superseded".*"newer_release":"r2"/, 10_000));
    expect(superseded.in_flight).toBe(1);
    const fresh = await Promise.all([1, 2, 3, 4, 5, 6].map(() => trigger({ handler: 'noop' })));
    for (const id of fresh) expect((await eventually(() => succeeded(id), 15_000)).worker_id).toBe(next.id);

    const exit = await old.child.exited;
    const exitedAt = Date.now();
    expect(exit).toEqual({ code: 0, signal: null });
    const done = await row(long);
    expect(done).toMatchObject({ status: 'succeeded', worker_id: old.id, attempt: 1, attempts: 1 });
    // It retired while the long attempt ran, finished it, and only then exited.
    expect(done.finished_at!.getTime()).toBeGreaterThan(Date.parse(superseded.time));
    expect(done.finished_at!.getTime()).toBeLessThanOrEqual(exitedAt);
    expect(old.child.output()).toContain('"worker.retired"');

    // Nothing was claimed twice: every execution started once, on one worker.
    const starts = startsById(old.child, next.child);
    for (const id of [long, meanwhile, ...fresh]) expect(starts.get(id), id).toBe(1);
    const { rows } = await env.pool.query(`SELECT id FROM workers`);
    expect(rows.map((r) => r.id)).toEqual([next.id]);
  }, 60_000);

  it('hands a long attempt back at its grace when the retiring worker is stopped, and the newer worker runs it', async () => {
    await recordRelease(env.pool, 'g1');
    const old = await startWorker('g1', { SHUTDOWN_GRACE: '1s' });
    const long = await trigger({ handler: 'sleep', lane: 'long', timeoutMs: 60_000 }, { ms: 20_000 });
    await eventually(async () => (await row(long)).worker_id === old.id, 15_000);
    await recordRelease(env.pool, 'g2');
    const next = await startWorker('g2');
    await old.child.waitFor(/"worker.superseded"/, 10_000);

    expect((await row(long)).status).toBe('running');
    old.child.kill('SIGTERM');
    expect(await old.child.exited).toEqual({ code: 0, signal: null });
    expect(old.child.output()).toMatch(/"released at shutdown"/);
    const done = await eventually(() => succeeded(long), 40_000);
    // The same attempt, run again from the start by the newer worker (released, not failed).
    expect(done).toMatchObject({ worker_id: next.id, attempt: 1, attempts: 1 });
  }, 90_000);
});

describe('workerUpsert: when a worker should retire', () => {
  const info = (id: string, release: string | null, lanes: WorkerInfo['lanes']): WorkerInfo => ({
    id,
    kind: 'container',
    host: 'h',
    startedAt: new Date(),
    lastHeartbeatAt: new Date(),
    concurrency: 1,
    inFlight: 0,
    version: 'v',
    lanes,
    release,
    liveWithinMs: 30_000,
  });

  it('retires only for a newer recorded release whose live workers serve all of its lanes', async () => {
    await recordRelease(env.pool, 'u1');
    const old = info('u-old', 'u1', ['long', 'short']);
    expect(await env.store.workerUpsert(old)).toEqual({ newerRelease: null });
    await recordRelease(env.pool, 'u2');
    // No worker of u2 yet.
    expect(await env.store.workerUpsert(old)).toEqual({ newerRelease: null });
    // One that serves the short lane only: the long lane would be left without a worker.
    await env.store.workerUpsert(info('u-new-short', 'u2', ['short']));
    expect(await env.store.workerUpsert(old)).toEqual({ newerRelease: null });
    await env.store.workerUpsert(info('u-new-long', 'u2', ['long']));
    expect(await env.store.workerUpsert(old)).toEqual({ newerRelease: 'u2' });
    // A worker of u2 never retires for u2, nor does one without a release or with one never recorded.
    expect(await env.store.workerUpsert(info('u-new-long', 'u2', ['long']))).toEqual({ newerRelease: null });
    expect(await env.store.workerUpsert(info('u-none', null, ['short']))).toEqual({ newerRelease: null });
    expect(await env.store.workerUpsert(info('u-unknown', 'u0', ['short']))).toEqual({ newerRelease: null });
    // Recording u1 again (a retried deploy step) does not make it newer.
    expect(await recordRelease(env.pool, 'u1')).toEqual({ release: 'u1', recorded: false });
    expect(await env.store.workerUpsert(old)).toEqual({ newerRelease: 'u2' });
    // Newer workers whose heartbeats stopped do not count.
    await env.pool.query(`UPDATE workers SET last_heartbeat_at = now() - interval '1 minute' WHERE release = 'u2'`);
    expect(await env.store.workerUpsert(old)).toEqual({ newerRelease: null });
    await env.pool.query(`DELETE FROM workers WHERE id LIKE 'u-%'`);
  });
});
