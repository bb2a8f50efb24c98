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
import { spawn } from 'node:child_process';
import { ROOT, spawnEntry, type Child } from './support/processes';
import { supervision } from './support/engine';
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

function workerEnv(): Record<string, string> {
  const url = new URL(env.childEnv.DATABASE_URL!);
  url.password = secrets.password; // trust authentication ignores it; the job must still never see it
  return {
    ...env.childEnv,
    DATABASE_URL: url.toString(),
    API_KEYS: secrets.apiKey,
    AWS_SECRET_ACCESS_KEY: secrets.aws,
    LEASE_TIMEOUT: '3s',
    WORKER_CONCURRENCY: '4',
  };
}

async function startWorker(): Promise<Child> {
  worker = spawnEntry('functions/worker-process.ts', workerEnv());
  await worker.waitFor(/"event":"worker\.started"/);
  return worker;
}

/** The worker as an unprivileged user (its commands then run as that user too), optionally through the scrub. */
async function startUnprivilegedWorker(scrub: boolean): Promise<{ pid: number; stop(): Promise<void> }> {
  const node = [process.execPath, '--import', 'tsx', `${ROOT}functions/worker-process.ts`];
  const argv = scrub
    ? [supervision!.path, '--scrub', 'DATABASE_URL,REDIS_URL,API_KEYS,AWS_SECRET_ACCESS_KEY', '--', ...node]
    : node;
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: ROOT,
    uid: 65534,
    gid: 65534,
    env: { PATH: process.env.PATH!, HOME: '/tmp', LOG_LEVEL: 'info', ...workerEnv() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c));
  child.stderr!.on('data', (c: Buffer) => (output += c));
  await eventually(() => output.includes('"event":"worker.started"'), 30_000).catch(() => {
    throw new Error(`worker did not start:\n${output}`);
  });
  return {
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** Runs the ancestor-scanning job once and returns its output. */
async function scanOutput(): Promise<string> {
  const job = await createJob(deps, jobSpec({ handler: null, command: SCAN }));
  const { execution } = await triggerJob(deps, { jobId: job.id });
  const done = await eventually(async () => {
    const e = await env.store.executionGet(execution.id);
    return e && e.status === 'succeeded' ? e : null;
  }, 20_000);
  expect(done.output).toContain(`JOB_EXECUTION_ID=${execution.id}`);
  return done.output!;
}

// Every ancestor up to pid 1: its environment and command line if readable, and a signal to it; then its own env.
const SCAN = [
  'p=$PPID',
  'while [ "$p" -gt 1 ]; do',
  '  echo "ancestor $p"',
  '  tr "\\0" "\\n" < /proc/$p/environ 2>/dev/null && echo "read environ of $p"',
  '  tr "\\0" " " < /proc/$p/cmdline 2>/dev/null; echo',
  '  kill -0 $p 2>/dev/null && echo "may signal $p"',
  '  p=$(sed "s/.*) . //" /proc/$p/stat | cut -d" " -f1)',
  'done',
  'env',
].join('\n');

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
    await eventually(
      () => sideEffects(file).filter((l) => l.startsWith('start')).length === 3 && processesWith(s).length >= 9,
      10_000,
    );
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
    const output = await scanOutput();
    // The scan did run: it walked up past its worker.
    expect(output).toContain(`ancestor ${w.process.pid}`);
    for (const secret of Object.values(secrets)) expect(output).not.toContain(secret);
    expect(output).not.toMatch(/^(DATABASE_URL|REDIS_URL|API_KEYS|AWS_SECRET_ACCESS_KEY)=/m);
    if (isRoot) {
      expect(output).not.toMatch(/read environ of \d|may signal \d/);
    }
    expect(w.process.exitCode).toBeNull();
  });

  it.runIf(isRoot)(
    'a worker that is not root, started through jobs-supervise --scrub, has no secret in its /proc environ',
    async () => {
      // Without the scrub its commands (its own user) read the secrets from the worker's environ: why it exists.
      const plain = await startUnprivilegedWorker(false);
      const exposed = await scanOutput();
      await plain.stop();
      expect(exposed).toContain(`read environ of ${plain.pid}`);
      expect(exposed).toContain(secrets.apiKey);

      const scrubbed = await startUnprivilegedWorker(true);
      const output = await scanOutput();
      await scrubbed.stop();
      expect(output).toContain(`read environ of ${scrubbed.pid}`);
      for (const secret of Object.values(secrets)) expect(output).not.toContain(secret);
    },
  );
});
