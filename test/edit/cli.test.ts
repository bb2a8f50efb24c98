/** The `jobs` CLI on the typed client, against the API on the real PostgreSQL and Redis. */
import { serve, type ServerType } from '@hono/node-server';
import { createJobsClient } from '@jobs/client';
import { runCli } from '@jobs/client/cli';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, type Harness } from '../api/harness';
import { engine } from '../support/engine';
import { ROOT } from '../support/processes';

let h: Harness;
const dir = mkdtempSync(join(tmpdir(), 'jobs-cli-'));
beforeAll(async () => {
  h = await apiHarness();
});
afterAll(async () => {
  await h.cleanup();
});

/** Runs the CLI in-process; the client's requests go to the app directly. */
async function cli(...argv: string[]) {
  const api = createJobsClient({
    baseUrl: 'http://localhost',
    fetch: (request) => Promise.resolve(h.app.request(request)),
  });
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, api, {
    out: (t) => void out.push(t),
    err: (t) => void err.push(t),
    sleep: () => new Promise((r) => setTimeout(r, 50)),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const unique = (label: string) => `${label}-${Math.random().toString(36).slice(2, 8)}`;
const jobNamed = async (name: string) => (await h.env.store.jobGetByName(name)) ?? null;

describe('jobs apply', () => {
  it('plans with --dry-run (nothing written), applies, then finds nothing to do; YAML and JSON', async () => {
    const [a, b] = [unique('a'), unique('b')];
    const yaml = file(
      'jobs.yaml',
      `jobs:\n  - name: ${a}\n    cron_expr: "*/5 * * * *"\n    command: echo a\n  - name: ${b}\n    handler: noop\n`,
    );
    const dry = await cli('apply', yaml, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.out).toContain(`create     ${a}`);
    expect(dry.out).toContain(`create     ${b}`);
    expect(await jobNamed(a)).toBeNull();
    const applied = await cli('apply', yaml);
    expect(applied.code, applied.err).toBe(0);
    expect(applied.out).toContain('applied 2 change(s): 2 created, 0 updated, 0 deleted, 0 unchanged');
    expect(await jobNamed(a)).toMatchObject({ cronExpr: '*/5 * * * *', managedBy: 'jobs-apply', version: 1 });
    const again = await cli('apply', yaml);
    expect(again.out).toContain(`unchanged  ${a}`);
    expect(again.out).toContain(`unchanged  ${b}`);
    expect(again.out).toContain('applied 0 change(s)');
    const json = file(
      'jobs.json',
      JSON.stringify([
        { name: a, cron_expr: '*/10 * * * *', command: 'echo a' },
        { name: b, handler: 'noop' },
      ]),
    );
    const update = await cli('apply', json);
    expect(update.out).toContain(`update     ${a}`);
    expect(update.out).toContain(`cron_expr: "*/5 * * * *" -> "*/10 * * * *"`);
    expect((await jobNamed(a))!.version).toBe(2);
  });

  it('--prune deletes only jobs an earlier apply created that the file no longer names', async () => {
    const [keep, drop, byHand] = [unique('keep'), unique('drop'), unique('hand')];
    const owner = unique('owner');
    await h.createJob({ name: byHand });
    const both = file(
      'both.json',
      JSON.stringify([
        { name: keep, handler: 'noop' },
        { name: drop, handler: 'noop' },
      ]),
    );
    expect((await cli('apply', both, '--owner', owner)).code).toBe(0);
    const one = file('one.json', JSON.stringify([{ name: keep, handler: 'noop' }]));
    const withoutPrune = await cli('apply', one, '--owner', owner);
    expect(withoutPrune.out).not.toMatch(/^delete/m);
    expect(await jobNamed(drop)).not.toBeNull();
    const dry = await cli('apply', one, '--owner', owner, '--prune', '--dry-run');
    expect(dry.out).toMatch(new RegExp(`delete +${drop}`));
    expect(await jobNamed(drop)).not.toBeNull();
    const pruned = await cli('apply', one, '--owner', owner, '--prune');
    expect(pruned.code).toBe(0);
    expect(pruned.out).not.toContain(byHand);
    expect(await jobNamed(drop)).toBeNull();
    expect(await jobNamed(keep)).not.toBeNull();
    expect(await jobNamed(byHand)).not.toBeNull();
  });

  it('a failing spec fails with its reason and a non-zero exit, and nothing is applied', async () => {
    const [good, bad] = [unique('good'), unique('bad')];
    const path = file(
      'mixed.json',
      JSON.stringify([
        { name: good, handler: 'noop' },
        { name: bad, cron_expr: '0 0 30 2 *', handler: 'noop' },
        { handler: 'noop' },
        'text',
      ]),
    );
    const dry = await cli('apply', path, '--dry-run');
    expect(dry.code).toBe(1);
    expect(dry.out).toMatch(new RegExp(`FAILED +${bad}: .*cron_expr: .*never fires`));
    expect(dry.out).toMatch(/FAILED +#3: needs a "name"/);
    expect(dry.out).toMatch(/FAILED +#4: a job spec must be an object/);
    const run = await cli('apply', path);
    expect(run.code).toBe(1);
    expect(run.out).toContain('nothing was applied');
    expect(await jobNamed(good)).toBeNull();
    expect(await jobNamed(bad)).toBeNull();
    const missing = await cli('apply', join(dir, 'nope.yaml'));
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/ENOENT|no such file/);
    expect((await cli('apply', file('broken.json', '{"jobs": ['))).err).toMatch(/not valid JSON/);
  });

  it('runs as `npm run jobs` with JOBS_API_URL and JOBS_API_KEY, exiting non-zero on a failure', async () => {
    const keyed = await apiHarness({ apiKeys: ['cli-secret-0123456789abcdef'] });
    let server: ServerType | undefined;
    try {
      const port = await new Promise<number>((resolve) => {
        server = serve({ fetch: keyed.app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
      });
      const name = unique('spawned');
      const path = file(
        'spawned.json',
        JSON.stringify([
          { name, handler: 'noop' },
          { name: unique('x'), handler: 'no spaces allowed' },
        ]),
      );
      const run = await promisify(execFile)('npm', ['run', '--silent', 'jobs', '--', 'apply', path], {
        cwd: ROOT,
        env: { ...process.env, JOBS_API_URL: `http://127.0.0.1:${port}`, JOBS_API_KEY: 'cli-secret-0123456789abcdef' },
        timeout: 60_000,
      }).catch((error) => error as { code: number; stdout: string; stderr: string });
      expect((run as { code?: number }).code).toBe(1);
      expect(run.stdout).toContain(`create     ${name}`);
      expect(run.stdout).toMatch(/FAILED .*handler: must match/);
      expect(run.stdout).toContain('nothing was applied');
      expect(await keyed.env.store.jobGetByName(name)).toBeNull();
      const unauthorised = await promisify(execFile)('npm', ['run', '--silent', 'jobs', '--', 'list'], {
        cwd: ROOT,
        env: { ...process.env, JOBS_API_URL: `http://127.0.0.1:${port}`, JOBS_API_KEY: 'wrong' },
        timeout: 60_000,
      }).catch((error) => error as { code: number; stderr: string });
      expect((unauthorised as { code?: number }).code).toBe(1);
      expect(unauthorised.stderr).toContain('invalid API key');
    } finally {
      server?.close();
      await keyed.cleanup();
    }
  }, 90_000);
});

describe('jobs list / get / trigger / pause / resume / logs', () => {
  it('drives a job and follows its execution to the end', async () => {
    const job = await h.createJob({
      name: unique('ops'),
      command: 'echo line-one; sleep 0.3; echo line-two',
      cron_expr: '0 * * * *',
    });
    const list = await cli('list');
    expect(list.out).toContain(`${job.id}\t${job.name}\tactive\t0 * * * *\tv1`);
    const get = await cli('get', job.id);
    expect(JSON.parse(get.out)).toMatchObject({ id: job.id, name: job.name });
    expect((await cli('pause', job.id)).out).toBe(`${job.name} paused`);
    expect((await cli('list', '--status', 'paused')).out).toContain(job.name);
    expect((await cli('resume', job.id)).out).toMatch(new RegExp(`^${job.name} active, next run `));
    const trigger = await cli('trigger', job.id, '--payload', '{"x":1}');
    const id = /^execution (\d+) queued$/.exec(trigger.out)![1]!;
    const e = engine(h.env);
    await e.worker();
    try {
      const logs = await cli('logs', id, '--follow');
      expect(logs.code).toBe(0);
      expect(logs.out).toContain('line-one');
      expect(logs.out).toContain('line-two');
      expect(logs.err).toContain(`execution ${id} succeeded`);
    } finally {
      await e.stopAll();
    }
    expect((await cli('get', '424242')).code).toBe(1);
    expect((await cli('trigger', job.id, '--payload', '{nope')).code).toBe(2);
    expect((await cli('frobnicate')).code).toBe(2);
    expect((await cli()).code).toBe(2);
    expect((await cli('get')).code).toBe(2);
  });
});
