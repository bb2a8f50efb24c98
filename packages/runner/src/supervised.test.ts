import { afterAll, describe, expect, it } from 'vitest';
import type { StartedExecution } from '@jobs/core';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isRoot, processesWith, sharedDir, uniqueSleep } from '../../../test/support/procs';
import { runShell } from './shell';
import { findSupervisor, lookupUser, type Supervision } from './supervisor';

const supervisor = findSupervisor();
const supervision: Supervision = { path: supervisor!, user: isRoot ? 'nobody' : null };
const dir = sharedDir('supervised');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const execution = {
  id: '1',
  jobId: '1',
  attempt: 1,
  scheduledFor: new Date(),
  payload: null,
} as unknown as StartedExecution;
const run = (
  command: string,
  signal = new AbortController().signal,
  options: { killAfterMs?: number; env?: NodeJS.ProcessEnv } = {},
) => runShell(command, execution, signal, { supervision, ...options });

async function gone(marker: string, withinMs = 2000): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  let left = processesWith(marker);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    left = processesWith(marker);
  }
  return left;
}

describe('supervised commands', () => {
  it('is built (npm ci builds it; every guarantee below depends on it)', () => {
    expect(supervisor).not.toBeNull();
  });

  it('ends the attempt when the shell exits: a background child neither holds it open nor survives it', async () => {
    const s = uniqueSleep(30);
    const started = Date.now();
    const result = await run(`sleep ${s} & setsid sleep ${s} & echo started`);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result).toMatchObject({ ok: true, exitCode: 0, output: 'started\n' });
    expect(await gone(s, 200)).toEqual([]);
  });

  it('keeps output written before the exit, and reports the exit code of the shell, not of its leftovers', async () => {
    const s = uniqueSleep(30);
    const result = await run(`echo before; (sleep ${s}; echo after) & exit 7`);
    expect(result).toMatchObject({ ok: false, exitCode: 7, error: 'exit code 7', output: 'before\n' });
    expect(await gone(s, 200)).toEqual([]);
  });

  it('reports a signal that killed the shell as such', async () => {
    const result = await run('kill -KILL $$');
    expect(result).toMatchObject({ ok: false, error: 'killed by signal SIGKILL' });
  });

  it('ends every process of the attempt on abort, setsid and double-forked ones included, SIGKILL after the grace', async () => {
    const s = uniqueSleep(40);
    const abort = new AbortController();
    const pending = run(
      `trap '' TERM; sleep ${s} & setsid sh -c 'sleep ${s} & sleep ${s}' & (sleep ${s} &) ; echo up; sleep ${s}`,
      abort.signal,
      { killAfterMs: 300 },
    );
    await waitFor(() => processesWith(s).length >= 5);
    const before = Date.now();
    abort.abort('timeout');
    const result = await pending;
    expect(Date.now() - before).toBeGreaterThanOrEqual(250);
    expect(Date.now() - before).toBeLessThan(2000);
    expect(result).toMatchObject({ ok: false, error: 'killed (timeout)', output: 'up\n' });
    expect(processesWith(s)).toEqual([]);
  });

  it('kills everything the command started when its worker dies by SIGKILL (the control pipe closes)', async () => {
    const s = uniqueSleep(45);
    const file = join(dir, 'side-effect');
    // A stand-in worker: a node process that starts the supervisor and is then SIGKILLed.
    const { spawn } = await import('node:child_process');
    const script = `
      const { spawn } = require('node:child_process');
      const c = spawn(${JSON.stringify(supervision.path)}, [${supervision.user ? `'--user', '${supervision.user}', ` : ''}'--', '/bin/sh', '-c', process.argv[1]], { detached: true, stdio: ['pipe', 'inherit', 'inherit'] });
      setInterval(() => {}, 1000);`;
    const command = `sleep ${s} & setsid sh -c 'sleep ${s}; echo late >> ${file}' & (sleep ${s} &); sleep ${s}; echo end >> ${file}`;
    const fakeWorker = spawn(process.execPath, ['-e', script, command], { stdio: 'ignore' });
    await waitFor(() => processesWith(s).length >= 4);
    fakeWorker.kill('SIGKILL');
    expect(await gone(s, 1000)).toEqual([]);
    expect(() => readFileSync(file)).toThrow(/ENOENT/);
  });

  it.runIf(isRoot)(
    "runs commands of a root worker as JOB_USER: no reading the worker's /proc, no signalling it, no privileges",
    async () => {
      expect(lookupUser(supervision.path, 'nobody')).toEqual({ uid: 65534, gid: 65534 });
      const result = await run(
        [
          'id -u',
          `cat /proc/${process.pid}/environ > /dev/null 2>&1 && echo read-worker-environ`,
          `kill -0 ${process.pid} 2>/dev/null && echo can-signal-worker`,
          'kill -0 $PPID 2>/dev/null && echo can-signal-supervisor',
          'grep NoNewPrivs /proc/self/status',
          'echo "home=$HOME user=$USER"',
        ].join('; '),
      );
      expect(result.output).toBe('65534\nNoNewPrivs:\t1\nhome=/nonexistent user=nobody\n');
    },
  );

  it('says so when the command cannot start as the job user', async () => {
    const result = await runShell('echo hi', execution, new AbortController().signal, {
      supervision: { path: supervision.path, user: 'no-such-user-x' },
    });
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/no user named no-such-user-x/);
  });
});

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
