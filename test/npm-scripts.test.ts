/**
 * `npm start` and `npm run worker` exec node, so signals reach it directly, and node exits when npm dies: killing
 * the npm process by its pid must not leave the node process serving. A terminal's Ctrl-C (SIGINT to npm and node
 * at once, which npm also forwards) is one graceful shutdown, not a forced exit.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createTestEnv, eventually, type TestEnv } from './support/env';
import { ROOT } from './support/processes';

let env: TestEnv;
const started: ChildProcess[] = [];
const pids: number[] = [];
beforeEach(async () => {
  env = await createTestEnv('npm');
});
afterEach(async () => {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (const child of started.splice(0)) child.kill('SIGKILL');
  await env.cleanup();
});

function npmRun(script: string, extra: Record<string, string> = {}) {
  const child = spawn('npm', ['run', '--silent', script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'info', ...env.childEnv, ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, as a terminal's foreground job
  });
  started.push(child);
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c));
  child.stderr!.on('data', (c: Buffer) => (output += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** The node process npm runs: its direct child (the scripts exec node instead of leaving a shell between). */
function nodeChildOf(pid: number): number | null {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid && /\bnode\b/.test(readFileSync(`/proc/${entry}/cmdline`, 'utf8'))) return Number(entry);
    } catch {
      // gone
    }
  }
  return null;
}

describe('npm scripts', () => {
  it("npm run worker: node is npm's own child, and exits (gracefully) when npm is SIGKILLed", async () => {
    const npm = npmRun('worker');
    await eventually(() => npm.output().includes('"event":"worker.started"'), 30_000);
    const node = nodeChildOf(npm.child.pid!);
    expect(node).not.toBeNull();
    pids.push(node!);
    expect(readFileSync(`/proc/${node}/cmdline`, 'utf8')).toContain('functions/worker-process.ts');
    npm.child.kill('SIGKILL');
    await eventually(
      () => !existsSync(`/proc/${node}`) || readFileSync(`/proc/${node}/stat`, 'utf8').includes(') Z '),
      15_000,
      100,
    );
  });

  it('npm start: a terminal Ctrl-C (SIGINT to npm and node at once, forwarded again by npm) shuts down gracefully', async () => {
    const npm = npmRun('start', { HTTP_PORT: '0' });
    await eventually(() => npm.output().includes('"event":"api.listening"'), 30_000);
    const node = nodeChildOf(npm.child.pid!);
    expect(node).not.toBeNull();
    pids.push(node!);
    process.kill(-npm.child.pid!, 'SIGINT');
    expect(await npm.exited).toBe(0);
    expect(npm.output()).toContain('"event":"local.stopped"');
    expect(npm.output()).not.toContain('again: exiting now');
  });

  it('npm start: killing npm by its pid stops the API too', async () => {
    const npm = npmRun('start', { HTTP_PORT: '0' });
    const line = await eventually(() => /"port":(\d+)/.exec(npm.output())?.[1], 30_000);
    const node = nodeChildOf(npm.child.pid!);
    pids.push(node!);
    npm.child.kill('SIGKILL');
    await eventually(
      async () => {
        try {
          await fetch(`http://127.0.0.1:${line}/healthz`, { signal: AbortSignal.timeout(500) });
          return false;
        } catch {
          return true;
        }
      },
      15_000,
      200,
    );
  });
});
