/**
 * The zero-configuration start: `npm start`'s entry point with neither DATABASE_URL nor REDIS_URL set (nor any other
 * variable of ours), in an empty working directory. It must start an embedded PostgreSQL with the queue on it, serve
 * the API and run a triggered job, stop that server with itself, and find its data again at the next start.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { eventually } from '../support/env';
import { ROOT } from '../support/processes';

const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const dirs: string[] = [];
const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh working directory the server's user (`postgres`, when we are root) can reach. */
function workdir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'jobs-embedded-'));
  chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
}

function start(cwd: string) {
  // Only what a newcomer's shell has: no variable of this project, so nothing points at the system servers.
  const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'functions/local.ts')], {
    cwd,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', HTTP_PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c));
  child.stderr!.on('data', (c: Buffer) => (out += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function listening(s: ReturnType<typeof start>): Promise<string> {
  const match = await eventually(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(s.output()), 90_000, 100).catch(
    (error) => {
      throw new Error(`${error.message}\n${s.output()}`);
    },
  );
  return match[1]!;
}

async function api(base: string, path: string, body?: unknown) {
  const res = await fetch(`${base}/api/v1${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function runOnce(base: string, jobId: unknown): Promise<string> {
  const triggered = await api(base, `/jobs/${jobId}/trigger`, {});
  expect(triggered.status).toBe(201);
  const id = (triggered.body.id ?? (triggered.body.execution as Record<string, unknown>)?.id) as string;
  await eventually(async () => (await api(base, `/executions/${id}`)).body.status === 'succeeded', 30_000, 100);
  return id;
}

/** The server runs as a child of node; none may be left on the data directory once node has exited. */
function serverRunning(dataDir: string): boolean {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return false;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  return existsSync(`/proc/${pid}`);
}

describe('npm start with nothing configured', () => {
  it('runs on an embedded PostgreSQL, says so first, and keeps its data across a restart', async () => {
    const cwd = workdir();
    const dataDir = join(cwd, '.data/postgres');

    const first = start(cwd);
    const base = await listening(first);
    const firstLine = first
      .output()
      .split('\n')
      .find((l) => l.startsWith('{'))!;
    expect(JSON.parse(firstLine)).toMatchObject({
      event: 'embedded_postgres.started',
      created: true,
      queue: 'postgres',
    });
    expect(firstLine).toContain('DATABASE_URL');
    expect(first.output()).not.toContain('redis.error');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    const job = await api(base, '/jobs', { name: 'embedded', handler: 'noop' });
    expect(job.status).toBe(201);
    const before = await runOnce(base, job.body.id);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain('"event":"local.stopped"');
    expect(serverRunning(dataDir)).toBe(false);

    const second = start(cwd);
    const again = await listening(second);
    expect(
      JSON.parse(
        second
          .output()
          .split('\n')
          .find((l) => l.startsWith('{'))!,
      ),
    ).toMatchObject({ event: 'embedded_postgres.started', created: false });
    expect((await api(again, `/jobs/${job.body.id}`)).body).toMatchObject({ name: 'embedded' });
    expect((await api(again, `/executions/${before}`)).body).toMatchObject({ status: 'succeeded' });
    await runOnce(again, job.body.id);

    // Killed outright, it cannot stop its server: the next start stops the orphan and goes on with the data.
    second.child.kill('SIGKILL');
    await second.exited;
    const third = start(cwd);
    const last = await listening(third);
    expect((await api(last, `/jobs/${job.body.id}`)).status).toBe(200);
    third.child.kill('SIGTERM');
    expect(await third.exited).toBe(0);
    expect(serverRunning(dataDir)).toBe(false);
  });

  it('refuses a second start in the same folder, naming the running one, which goes on serving', async () => {
    const cwd = workdir();
    const dataDir = join(cwd, '.data/postgres');
    const first = start(cwd);
    const base = await listening(first);
    const job = await api(base, '/jobs', { name: 'first', handler: 'noop' });
    expect(job.status).toBe(201);
    const port = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[3]);

    const second = start(cwd);
    expect(await second.exited).toBe(1);
    const text = second.output().trim();
    expect(text).toMatch(/^npm start is already running in this folder/);
    expect(text).toContain(`pid ${first.child.pid}`);
    expect(text).toContain(`PostgreSQL on 127.0.0.1:${port}`);
    expect(text).toContain(`API at ${base}`);
    expect(text).not.toMatch(/\n\s+at /);

    // The first one's server was left alone: it still answers, and runs work.
    expect(serverRunning(dataDir)).toBe(true);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    await runOnce(base, job.body.id);

    // Without its owner file (a server started before there was one), a live parent still marks it as taken.
    rmSync(join(cwd, '.data/postgres.owner'));
    const third = start(cwd);
    expect(await third.exited).toBe(1);
    expect(third.output()).toContain(`npm start is already running in this folder (pid ${first.child.pid}`);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(existsSync(join(cwd, '.data/postgres.owner'))).toBe(false);
    expect(serverRunning(dataDir)).toBe(false);
  });

  it('fails to start with one clear message when the embedded server cannot start', async () => {
    const cwd = workdir();
    mkdirSync(join(cwd, '.data/postgres'), { recursive: true });
    // A data directory of another, unknown, PostgreSQL version.
    writeFileSync(join(cwd, '.data/postgres/PG_VERSION'), '7\n');
    writeFileSync(join(cwd, '.data/postgres.password'), 'x\n');
    const s = start(cwd);
    expect(await s.exited).toBe(1);
    const text = s.output().trim();
    expect(text).toMatch(/^could not start the embedded PostgreSQL in .*\.data\/postgres: /);
    expect(text).toContain('Set DATABASE_URL');
    expect(text).not.toMatch(/\n\s+at /); // no stack trace
  });
});
