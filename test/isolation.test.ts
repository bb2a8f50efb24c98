/**
 * A job cannot escape its attempt, tested on the real worker process (`npm run worker`'s entry point): a SIGKILLed
 * worker takes every process of its jobs with it, and a job finds none of the worker's secrets in /proc and cannot
 * signal it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJob, triggerJob, type CommandDeps } from '@jobs/core';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createTestEnv, eventually, recorder, type TestEnv } from './support/env';
import { jobSpec } from './support/fixtures';
import { spawnEntry, type Child } from './support/processes';
import { isRoot, processesWith, sharedDir, uniqueSleep } from './support/procs';

let env: TestEnv;
let deps: CommandDeps;
let dir: string;
let worker: Child | null = null;
const secrets = {
  password: `pw${randomBytes(8).toString('hex')}`,
  apiKey: `key${randomBytes(8).toString('hex')}`,
  aws: `aws${randomBytes(8).toString('hex')}`,
};

beforeEach(async () => {
  env = await createTestEnv('isolation');
  const rec = recorder();
  deps = { store: env.store, queue: env.queue, clock: { now: () => new Date() }, sink: rec.sink, logger: rec.logger };
  dir = sharedDir('isolation');
});
afterEach(async () => {
  worker?.kill('SIGKILL');
  await worker?.exited;
  worker = null;
  await env.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

async function startWorker(): Promise<Child> {
  const url = new URL(env.childEnv.DATABASE_URL!);
  url.password = secrets.password; // trust authentication ignores it; the job must still never see it
  worker = spawnEntry('functions/worker-process.ts', {
    ...env.childEnv,
    DATABASE_URL: url.toString(),
    API_KEYS: secrets.apiKey,
    AWS_SECRET_ACCESS_KEY: secrets.aws,
    LEASE_TIMEOUT: '3s',
    WORKER_CONCURRENCY: '4',
  });
  await worker.waitFor(/"event":"worker\.started"/);
  return worker;
}

const sideEffects = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : []);

describe('a job cannot escape its attempt', () => {
  it('SIGKILL of a worker ends every process of its running jobs at once: no side effect of those attempts completes', async () => {
    const s = uniqueSleep(3);
    const file = join(dir, 'effects');
    const job = await createJob(
      deps,
      jobSpec({
        handler: null,
        command: `echo "start $JOB_EXECUTION_ID" >> ${file}; sleep ${s} & setsid sh -c 'sleep ${s}; echo "late $JOB_EXECUTION_ID" >> ${file}' & (sleep ${s}; echo "bg $JOB_EXECUTION_ID" >> ${file}) & sleep ${s}; echo "end $JOB_EXECUTION_ID" >> ${file}`,
        maxRetries: 0,
      }),
    );
    const w = await startWorker();
    for (let i = 0; i < 3; i++) await triggerJob(deps, { jobId: job.id });
    await eventually(() => sideEffects(file).filter((l) => l.startsWith('start')).length === 3 && processesWith(s).length >= 9, 10_000);
    const killedAt = Date.now();
    w.kill('SIGKILL');
    await w.exited;
    // Gone well within the lease (3 s), never mind the 3 s the jobs would still sleep.
    await eventually(() => processesWith(s).length === 0, 1000, 10);
    expect(Date.now() - killedAt).toBeLessThan(1000);
    await new Promise((r) => setTimeout(r, 3500));
    expect(sideEffects(file).filter((l) => !l.startsWith('start'))).toEqual([]);
  });

  it('a job scanning /proc of every ancestor and its own environment finds none of the secrets, and cannot signal its worker', async () => {
    const w = await startWorker();
    const job = await createJob(
      deps,
      jobSpec({
        handler: null,
        // Every ancestor up to pid 1: its environment and command line if readable, and a signal to it.
        command: [
          'p=$PPID',
          'while [ "$p" -gt 1 ]; do',
          '  echo "ancestor $p"',
          '  tr "\\0" "\\n" < /proc/$p/environ 2>/dev/null && echo "read environ of $p"',
          '  tr "\\0" " " < /proc/$p/cmdline 2>/dev/null; echo',
          '  kill -0 $p 2>/dev/null && echo "may signal $p"',
          '  p=$(sed "s/.*) . //" /proc/$p/stat | cut -d" " -f1)',
          'done',
          'env',
        ].join('\n'),
      }),
    );
    const { execution } = await triggerJob(deps, { jobId: job.id });
    const done = await eventually(async () => {
      const e = await env.store.executionGet(execution.id);
      return e && e.status === 'succeeded' ? e : null;
    }, 15_000);
    const output = done.output!;
    // The scan did run: it saw its own environment and walked up past its worker.
    expect(output).toContain(`JOB_EXECUTION_ID=${execution.id}`);
    expect(output).toContain(`ancestor ${w.process.pid}`);
    for (const secret of Object.values(secrets)) expect(output).not.toContain(secret);
    expect(output).not.toMatch(/^(DATABASE_URL|REDIS_URL|API_KEYS|AWS_SECRET_ACCESS_KEY)=/m);
    if (isRoot) {
      expect(output).not.toMatch(/read environ of \d|may signal \d/);
    }
    expect(w.process.exitCode).toBeNull();
  });
});
