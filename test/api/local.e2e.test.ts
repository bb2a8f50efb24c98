/**
 * End to end: `npm start` (functions/local.ts) as a child process on this test's schema and Redis prefix, used over
 * HTTP exactly as a person would with curl, then stopped with SIGTERM.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createTestEnv, eventually, type TestEnv } from '../support/env';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Started {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Runs `npm start`'s entry point directly with node (npm would add a process between the test and the signal). */
function startLocal(env: Record<string, string>): Started {
  const child = spawn(process.execPath, ['--import', 'tsx', 'functions/local.ts'], {
    cwd: root,
    env: { ...process.env, API_KEYS: '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

let env: TestEnv;
let started: Started | null = null;

beforeEach(async () => {
  env = await createTestEnv('e2e');
});
afterEach(async () => {
  if (started && started.child.exitCode === null && started.child.signalCode === null) {
    started.child.kill('SIGKILL');
    await started.exited;
  }
  started = null;
  await env.cleanup();
});

describe('npm start', () => {
  it('serves the API, runs a triggered job on its worker, and exits 0 on SIGTERM', async () => {
    started = startLocal({ ...env.childEnv, HTTP_PORT: '0' });
    const s = started;
    const line = await eventually(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(s.stdout()), 20_000, 50).catch(
      (error) => {
        throw new Error(`${error.message}\nstdout:\n${s.stdout()}\nstderr:\n${s.stderr()}`);
      },
    );
    const base = line[1]!;
    expect(s.stdout()).toContain('"event":"api.open"');

    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);

    const created = await fetch(`${base}/api/v1/jobs`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"name":"my-job","cron_expr":"*/5 * * * *","command":"echo hello"}',
    });
    expect(created.status).toBe(201);
    const job = (await created.json()) as any;
    expect(job.next_run_at).not.toBeNull();

    const triggered = await fetch(`${base}/api/v1/jobs/${job.id}/trigger`, { method: 'POST' });
    expect(triggered.status).toBe(201);
    const execution = (await triggered.json()) as any;

    const done = await eventually(
      async () => {
        const res = await fetch(`${base}/api/v1/executions/${execution.id}`);
        const body = (await res.json()) as any;
        return body.status === 'succeeded' ? body : null;
      },
      20_000,
      100,
    ).catch((error) => {
      throw new Error(`${error.message}\nstdout:\n${s.stdout()}\nstderr:\n${s.stderr()}`);
    });
    expect(done).toMatchObject({ output: 'hello\n', exit_code: 0, attempt: 1 });
    expect(done.worker_id).toMatch(/^local-/);

    const workers = (await (await fetch(`${base}/api/v1/workers`)).json()) as any;
    expect(workers.data.map((w: any) => w.kind)).toEqual(['local']);

    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    // Every request was logged as one structured line.
    const requests = s
      .stdout()
      .split('\n')
      .filter((l) => l.includes('"event":"http.request"'))
      .map((l) => JSON.parse(l));
    expect(requests.length).toBeGreaterThanOrEqual(4);
    expect(requests[0]).toMatchObject({ method: 'GET', path: '/healthz', status: 200, request_id: expect.any(String) });
  }, 60_000);

  it('exits 1 with a clear message when PostgreSQL is unreachable', async () => {
    started = startLocal({
      ...env.childEnv,
      DATABASE_URL: 'postgres://postgres:secret@127.0.0.1:1/postgres',
      HTTP_PORT: '0',
    });
    expect(await started.exited).toBe(1);
    expect(started.stderr()).toMatch(
      /PostgreSQL at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/postgres is unreachable/,
    );
    expect(started.stderr()).not.toContain('secret');
  }, 30_000);
});
