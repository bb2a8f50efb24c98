/**
 * The `jobs` CLI's commands against a real API server on a port (the real PostgreSQL and Redis behind it): delete,
 * trigger with a payload, cancel, replay, executions, dead letters, backfill over the 1,000-fire-time cap, --json,
 * all-or-nothing apply, usage errors and --help, and the messages for an unreachable URL and a missing key.
 */
import { serve, type ServerType } from '@hono/node-server';
import { createJobsClient } from '@jobs/client';
import { runCli, type CliTarget } from '@jobs/client/cli';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, type Harness } from '../api/harness';
import { engine } from '../support/engine';
import { ROOT } from '../support/processes';

const KEY = 'cli-commands-test-key-0123456789';
const READ_KEY = 'cli-commands-read-key-0123456789';
let h: Harness;
let server: ServerType;
let url: string;
const dir = mkdtempSync(join(tmpdir(), 'jobs-cli-commands-'));

function listen(fetch: (r: Request) => Response | Promise<Response>): Promise<{ server: ServerType; url: string }> {
  return new Promise((resolve) => {
    const s = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
      resolve({ server: s, url: `http://127.0.0.1:${info.port}` }),
    );
  });
}

/** Stops a server and drops its kept-alive connections: the next request is refused. */
const closeServer = (s: ServerType) =>
  new Promise<void>((resolve) => {
    s.close(() => resolve());
    (s as unknown as { closeAllConnections(): void }).closeAllConnections();
  });

beforeAll(async () => {
  h = await apiHarness({ apiKeys: [KEY, { name: 'reader', role: 'read', key: READ_KEY }] });
  ({ server, url } = await listen(h.app.fetch));
});
afterAll(async () => {
  server?.close();
  await h.cleanup();
});

/** Runs the CLI in-process over real HTTP to `target.url`. */
async function cli(argv: string[], target: CliTarget & { key?: string; fetch?: typeof fetch } = { url, keySet: true }) {
  const timeoutMs = target.timeoutMs ?? 10_000;
  const api = createJobsClient({
    baseUrl: target.url,
    apiKey: target.keySet ? (target.key ?? KEY) : undefined,
    fetch: target.fetch,
    timeoutMs,
  });
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(
    argv,
    api,
    { out: (t) => void out.push(t), err: (t) => void err.push(t), sleep: () => new Promise((r) => setTimeout(r, 50)) },
    { url: target.url, keySet: target.keySet, timeoutMs },
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}
const json = async (...argv: string[]) => {
  const r = await cli([...argv, '--json']);
  return { ...r, body: JSON.parse(r.out) };
};

const unique = (label: string) => `${label}-${Math.random().toString(36).slice(2, 8)}`;
const call = (method: string, path: string, body?: unknown) =>
  h.call(method, path, { body, headers: { Authorization: `Bearer ${KEY}` } });
const createJob = async (fields: Record<string, unknown>) => {
  const target = 'handler' in fields ? {} : { command: 'echo hi' };
  const res = await call('POST', '/api/v1/jobs', { name: unique('job'), ...target, ...fields });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; name: string };
};
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('usage and --help', () => {
  it('prints help per command, and refuses wrong use with a message, the usage and exit code 2', async () => {
    const all = await cli(['--help']);
    expect(all.code).toBe(0);
    for (const c of ['apply', 'delete', 'trigger', 'cancel', 'replay', 'executions', 'dead', 'backfill', 'logs'])
      expect(all.out).toMatch(new RegExp(`^  ${c} `, 'm'));
    const trigger = await cli(['trigger', '--help']);
    expect(trigger.code).toBe(0);
    expect(trigger.out).toMatch(/^usage: npm run jobs -- trigger JOB/);
    expect(trigger.out).toContain('--payload-file FILE');
    expect((await cli(['help', 'backfill'])).out).toContain('--from INSTANT');
    expect((await cli(['help', 'nope'])).code).toBe(2);

    const cases: [string[], RegExp][] = [
      [[], /give a command/],
      [['frobnicate'], /unknown command "frobnicate"/],
      [['list', '--bogus'], /Unknown option '--bogus'/],
      [['cancel'], /cancel: missing argument/],
      [['get', '1', '2'], /get: unexpected argument "2"/],
      [['executions', '--limit', '0'], /--limit must be a positive whole number/],
      [['executions', '--status', 'lost'], /--status must be one of queued/],
      [['list', '--status', 'gone'], /--status must be active or paused/],
      [['cancel', 'abc'], /EXECUTION must be a numeric id/],
      [['trigger', '1', '--payload', '{nope'], /--payload must be JSON/],
      [['trigger', '1', '--payload', '1', '--payload-file', 'x'], /not both/],
      [['backfill', '1'], /give --from/],
      [['backfill', '1', '--from', '2025-03-08T00:00'], /--from must be a date .* with an offset/],
      [['backfill', '1', '--from', '2025-03-09', '--to', '2025-03-08'], /--to must be after --from/],
      [['--status', 'x', 'list'], /--status: options come after the command/],
    ];
    for (const [argv, message] of cases) {
      const r = await cli(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err, argv.join(' ')).toMatch(message);
      expect(r.err, argv.join(' ')).toMatch(/usage: /);
      expect(r.out, argv.join(' ')).toBe('');
    }
    const asJson = await cli(['cancel', '--json']);
    expect(asJson.code).toBe(2);
    expect(JSON.parse(asJson.out)).toEqual({ error: { code: 'usage', message: expect.stringMatching(/missing/) } });
  });
});

describe('unreachable URL and missing key', () => {
  it('names the URL and JOBS_API_KEY, never the key itself', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      });
    });
    const down = `http://127.0.0.1:${closed}`;
    const r = await cli(['list'], { url: down, keySet: true });
    expect(r.code).toBe(1);
    expect(r.err).toContain(`cannot reach the jobs API at ${down}: connect ECONNREFUSED`);
    expect(r.err).toContain('JOBS_API_URL');
    const j = await cli(['list', '--json'], { url: down, keySet: true });
    expect(JSON.parse(j.out).error).toMatchObject({ code: 'unreachable' });

    const noKey = await cli(['list'], { url, keySet: false });
    expect(noKey.code).toBe(1);
    expect(noKey.err).toContain(`the jobs API at ${url} needs an API key: set JOBS_API_KEY`);
    const wrongKey = 'wrong-key-that-must-not-be-printed';
    const wrong = await cli(['executions'], { url, keySet: true, key: wrongKey });
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain(`the jobs API at ${url} refused the key in JOBS_API_KEY`);
    expect(wrong.err + wrong.out).not.toContain(wrongKey);

    const slow = await listen(() => new Promise((r) => setTimeout(() => r(new Response('{}')), 2000)));
    try {
      const late = await cli(['list'], { url: slow.url, keySet: true, timeoutMs: 300 });
      expect(late).toMatchObject({
        code: 1,
        err: `no answer from the jobs API at ${slow.url} within 0.3 s (JOBS_API_URL)`,
      });
    } finally {
      slow.server.close();
    }

    const notTheApi = await listen(() => new Response('<html>nope</html>', { status: 404 }));
    try {
      const other = await cli(['get', '1'], { url: notTheApi.url, keySet: true });
      expect(other.err).toBe(`HTTP 404 from ${notTheApi.url}: is JOBS_API_URL the jobs API's address?`);
    } finally {
      notTheApi.server.close();
    }
  });

  it('reads JOBS_API_URL and JOBS_API_KEY when run as a program', async () => {
    const run = (env: Record<string, string>, argv: string[], stdin = '') => {
      const running = promisify(execFile)(process.execPath, ['--import', 'tsx', 'functions/jobs-cli.ts', ...argv], {
        cwd: ROOT,
        env: { ...process.env, JOBS_API_KEY: '', ...env },
        timeout: 60_000,
      });
      running.child.stdin!.end(stdin);
      return running.then(
        (r) => ({ code: 0, ...r }),
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
    };
    const missing = await run({ JOBS_API_URL: url }, ['list']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`the jobs API at ${url} needs an API key: set JOBS_API_KEY`);
    const job = await createJob({});
    const env = { JOBS_API_URL: url, JOBS_API_KEY: KEY };
    const ok = await run(env, ['trigger', job.name, '--payload-file', '-', '--json'], '{"from": "stdin"}');
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ job_id: job.id, payload: { from: 'stdin' } });
    const bad = await run({ JOBS_API_URL: 'localhost:8080' }, ['list']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('JOBS_API_URL is not an http(s) URL: "localhost:8080"');
    const withSecret = await run({ JOBS_API_URL: 'http://user:hunter2-secret@127.0.0.1:9/' }, ['list']);
    expect(withSecret.code).toBe(2);
    expect(withSecret.stderr).toContain('JOBS_API_URL must not carry a user or password: set JOBS_API_KEY');
    expect(withSecret.stderr).not.toContain('hunter2');
  }, 90_000);
});

describe('a key below the role a command needs', () => {
  it('stops the command once, instead of failing every spec or execution', async () => {
    const reader = { url, keySet: true, key: READ_KEY };
    const names = [unique('r1'), unique('r2'), unique('r3')];
    const path = file('reader.json', JSON.stringify(names.map((name) => ({ name, handler: 'noop' }))));
    const apply = await cli(['apply', path], reader);
    expect(apply.code).toBe(1);
    expect(apply.out).toBe('');
    expect(apply.err.split('\n')).toEqual([expect.stringMatching(/admin/)]);
    const cancel = await cli(['cancel', '1', '2', '3'], reader);
    expect(cancel.code).toBe(1);
    expect(cancel.err.split('\n')).toEqual([expect.stringMatching(/operate/)]);
    expect((await cli(['executions'], reader)).code).toBe(0);
  });
});

describe('delete, trigger, cancel', () => {
  it('deletes a job by name or id', async () => {
    const [a, b] = [await createJob({}), await createJob({})];
    const byName = await cli(['delete', a.name]);
    expect(byName).toMatchObject({ code: 0, out: `deleted ${a.name} (id ${a.id})` });
    expect((await call('GET', `/api/v1/jobs/${a.id}`)).status).toBe(404);
    expect((await json('delete', b.id)).body).toEqual({ deleted: true, id: b.id, name: b.name });
    const again = await cli(['delete', b.id]);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/not found/i);
    const nobody = await cli(['delete', 'no-such-job-name']);
    expect(nobody).toMatchObject({ code: 1, err: 'no job named "no-such-job-name"' });
  });

  it('triggers with a payload (inline, from a file, idempotent) and cancels', async () => {
    const job = await createJob({});
    const inline = await json('trigger', job.name, '--payload', '{"to":"ops","n":[1,2]}');
    expect(inline.body).toMatchObject({ job_id: job.id, status: 'queued', payload: { to: 'ops', n: [1, 2] } });
    const fromFile = await cli(['trigger', job.id, '--payload-file', file('payload.json', '{"from":"file"}')]);
    const id = /^execution (\d+) queued$/.exec(fromFile.out)![1]!;
    expect((await call('GET', `/api/v1/executions/${id}`)).body.payload).toEqual({ from: 'file' });
    const once = await json('trigger', job.id, '--idempotency-key', 'k-1');
    const twice = await json('trigger', job.id, '--idempotency-key', 'k-1');
    expect(twice.body.id).toBe(once.body.id);

    const cancel = await cli(['cancel', id, inline.body.id]);
    expect(cancel.code).toBe(0);
    expect(cancel.out).toBe(`execution ${id} cancelled\nexecution ${inline.body.id} cancelled`);
    const mixed = await json('cancel', id, once.body.id);
    expect(mixed.code).toBe(1);
    expect(mixed.body).toEqual([
      { id, ok: false, error: expect.objectContaining({ status: 409, message: expect.any(String) }) },
      { id: once.body.id, ok: true, result: expect.objectContaining({ id: once.body.id, status: 'cancelled' }) },
    ]);
    expect(mixed.err).toContain(`execution ${id}: `);
  });
});

describe('executions, dead letters, replay', () => {
  it('lists executions by job and status, lists dead letters and replays them', async () => {
    const job = await createJob({ handler: 'explode', max_retries: 0 });
    const other = await createJob({});
    await call('POST', `/api/v1/jobs/${other.id}/trigger`, {});
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await call('POST', `/api/v1/jobs/${job.id}/trigger`, {})).body.id);

    const queued = await json('executions', '--job', job.name, '--status', 'queued');
    expect(queued.body.map((e: { id: string }) => e.id)).toEqual([...ids].reverse());
    const two = await cli(['executions', '--job', job.id, '--limit', '2']);
    expect(two.out.split('\n')).toHaveLength(2);
    expect(two.out.split('\n')[0]).toMatch(new RegExp(`^${ids[2]}\t${job.id}\tqueued\tmanual\t1\t`));

    const e = engine(h.env);
    await e.worker({
      handlers: {
        explode: () => {
          throw new Error('boom');
        },
      },
    });
    try {
      for (const id of ids) await waitFor(id, 'dead');
      await waitFor((await call('GET', `/api/v1/executions?job_id=${other.id}`)).body.data[0].id, 'succeeded');
    } finally {
      await e.stopAll();
    }
    const dead = await cli(['dead', '--job', job.name]);
    expect(dead.code).toBe(0);
    expect(dead.out.split('\n').map((l) => l.split('\t')[0])).toEqual([...ids].reverse());
    expect(dead.out).toContain('boom');

    const one = await cli(['replay', ids[0]!]);
    expect(one.code).toBe(0);
    const replayId = new RegExp(`^execution ${ids[0]} replayed as (\\d+) \\(queued\\)$`).exec(one.out)![1];
    const rest = await json('dead', '--job', job.id, '--replay');
    expect(rest.code).toBe(0);
    expect(rest.body.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]]);
    const again = await cli(['replay', ids[0]!]);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(new RegExp(`^execution ${ids[0]}: .*replayed`));
    const forced = await cli(['replay', ids[0]!, '--force']);
    expect(forced.code).toBe(0);
    expect(forced.out).not.toContain(`as ${replayId} `);
    const logs = await json('logs', ids[1]!);
    expect(logs.code).toBe(1);
    expect(logs.body).toEqual({
      id: ids[1],
      status: 'dead',
      exit_code: null,
      error: expect.stringContaining('boom'),
      output: expect.any(String),
    });
    const followed = await cli(['logs', ids[1]!, '--follow', '--json']);
    const lines = followed.out.split('\n').map((l) => JSON.parse(l));
    expect(lines.at(-1)).toEqual({
      id: ids[1],
      status: 'dead',
      exit_code: null,
      error: expect.stringContaining('boom'),
    });
    const listed = await json('dead', '--job', job.id);
    expect(listed.body.every((d: { replayed_by: string | null }) => d.replayed_by !== null)).toBe(true);
  }, 60_000);
});

async function waitFor(id: string, status: string) {
  for (let i = 0; i < 200; i++) {
    if ((await call('GET', `/api/v1/executions/${id}`)).body.status === status) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`execution ${id} never became ${status}`);
}

describe('backfill', () => {
  it('splits a range over the 1,000-fire-time cap into calls, with progress, and can be run again', async () => {
    const job = await createJob({ cron_expr: '*/5 * * * *', timezone: 'UTC', handler: 'noop' });
    // Four days every five minutes: more fire times than one call takes.
    const from = '2025-01-01T00:00:00Z';
    const to = '2025-01-05T00:00:00Z';
    const expected = 4 * 24 * 12;
    const dry = await cli(['backfill', job.name, '--from', from, '--to', to, '--dry-run', '--json']);
    expect(dry.code, dry.err).toBe(0);
    const plan = JSON.parse(dry.out);
    expect(plan).toMatchObject({ dry_run: true, fire_times: expected, created: 0, already_run: [] });
    expect(plan.chunks).toBeGreaterThan(1);
    expect((await call('GET', `/api/v1/executions?job_id=${job.id}`)).body.data).toEqual([]);

    const run = await cli(['backfill', job.id, '--from', from, '--to', to]);
    expect(run.code, run.err).toBe(0);
    const progress = run.err.split('\n');
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.at(-1)).toMatch(
      /^100% {2}.* \.\. 2025-01-05T00:00:00\.000Z: \d+ fire time\(s\), \d+ created, 0 already run$/,
    );
    expect(run.out).toMatch(
      new RegExp(`^${expected} fire time\\(s\\) in \\d+ call\\(s\\); created ${expected}, 0 already run$`),
    );
    const all = await json('executions', '--job', job.id, '--limit', '2000');
    expect(all.body).toHaveLength(expected);
    expect(new Set(all.body.map((e: { scheduled_for: string }) => e.scheduled_for)).size).toBe(expected);
    expect(all.body.at(-1).scheduled_for).toBe('2025-01-01T00:00:00.000Z');
    expect(all.body[0].scheduled_for).toBe('2025-01-04T23:55:00.000Z');

    const again = await json('backfill', job.id, '--from', '2024-12-31T23:00:00Z', '--to', to);
    expect(again.body).toMatchObject({ fire_times: expected + 12, created: 12 });
    expect(again.body.already_run).toHaveLength(expected);
  }, 60_000);

  it('says what it did and where to resume when the API goes away part-way', async () => {
    const job = await createJob({ cron_expr: '*/5 * * * *', timezone: 'UTC', handler: 'noop' });
    const own = await listen(h.app.fetch);
    // The API goes away after the second chunk it accepted.
    let accepted = 0;
    const cutting: typeof fetch = async (input, init) => {
      if (accepted === 2) await closeServer(own.server);
      const response = await fetch(input, init);
      if ((input as Request).url.endsWith('/backfill') && response.ok) accepted++;
      return response;
    };
    const from = '2025-02-01T00:00:00Z';
    const r = await cli(['backfill', job.id, '--from', from, '--to', '2025-02-08T00:00:00Z'], {
      url: own.url,
      keySet: true,
      fetch: cutting,
    });
    expect(r.code).toBe(1);
    const stop =
      /backfill stopped at (\S+) after (\d+) chunk\(s\): (\d+) execution\(s\) created; resume with --from (\S+)$/m.exec(
        r.err,
      );
    expect(stop, r.err).not.toBeNull();
    expect(r.err).toContain(`cannot reach the jobs API at ${own.url}`);
    const [, at, , created, resume] = stop!;
    expect(resume).toBe(at);
    const made = (await json('executions', '--job', job.id, '--limit', '5000')).body as { scheduled_for: string }[];
    expect(made).toHaveLength(Number(created));
    expect(made.every((e) => e.scheduled_for < resume!)).toBe(true);
    const rest = await json('backfill', job.id, '--from', resume!, '--to', '2025-02-08T00:00:00Z');
    expect(rest.body.created + Number(created)).toBe(7 * 24 * 12);
  });

  it('says why a backfill cannot run', async () => {
    const manual = await createJob({});
    const r = await cli(['backfill', manual.id, '--from', '2025-01-01']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/manual-only job has no fire times/);
    const future = await cli(['backfill', manual.id, '--from', '2025-01-01', '--to', '2999-01-01T00:00:00Z']);
    expect(future.err).toMatch(/is in the future/);
  });
});

describe('apply: a plan, then all or nothing', () => {
  it('--dry-run prints a plan with counts and writes nothing', async () => {
    const [a, b] = [unique('a'), unique('b')];
    await call('PUT', `/api/v1/jobs/by-name/${b}`, { handler: 'noop', managed_by: 'jobs-apply' });
    const path = file(
      'plan.json',
      JSON.stringify([
        { name: a, handler: 'noop' },
        { name: b, handler: 'noop', priority: 3 },
      ]),
    );
    const dry = await cli(['apply', path, '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.out.split('\n')[0]).toBe(`plan for ${path} (owner jobs-apply):`);
    expect(dry.out).toContain(`create     ${a}\n             handler: "noop"\nupdate     ${b} (id `);
    expect(dry.out).toContain('priority: 0 -> 3');
    expect(dry.out).toContain('plan: 1 to create, 1 to update, 0 to delete, 0 unchanged\ndry run: nothing was written');
    expect(await h.env.store.jobGetByName(a)).toBeNull();
    const asJson = await json('apply', path, '--dry-run');
    expect(asJson.body).toMatchObject({
      dry_run: true,
      applied: false,
      steps: [
        {
          action: 'create',
          name: a,
          job_id: null,
          changes: expect.arrayContaining([{ field: 'handler', old: null, new: 'noop' }]),
        },
        { action: 'update', name: b, changes: [{ field: 'priority', old: 0, new: 3 }] },
      ],
      failures: [],
    });
  });

  it('applies nothing when one spec fails validation', async () => {
    const [good, bad] = [unique('good'), unique('bad')];
    const path = file(
      'one-bad.json',
      JSON.stringify([
        { name: good, handler: 'noop' },
        { name: bad, cron_expr: '0 0 30 2 *', handler: 'noop' },
      ]),
    );
    const r = await cli(['apply', path]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(new RegExp(`FAILED +${bad}: .*never fires`));
    expect(r.out).toContain('nothing was applied: fix the failed spec(s) and run again');
    expect(await h.env.store.jobGetByName(good)).toBeNull();
  });

  it('says exactly what it applied when a write fails part-way', async () => {
    const names = [unique('w1'), unique('w2'), unique('w3')];
    const path = file('outage.json', JSON.stringify(names.map((name) => ({ name, handler: 'noop' }))));
    // The API goes away when the second job is written: a real refused connection, not a faked answer.
    const own = await listen(h.app.fetch);
    const api = own.url;
    let cut = false;
    const cutting: typeof fetch = async (input, init) => {
      const request = input as Request;
      if (!cut && request.method === 'PUT' && request.url.includes(encodeURIComponent(names[1]!))) {
        cut = true;
        await closeServer(own.server);
      }
      return fetch(input, init);
    };
    const r = await cli(['apply', path, '--json'], { url: api, keySet: true, fetch: cutting });
    expect(r.code).toBe(1);
    const body = JSON.parse(r.out);
    expect(body).toMatchObject({
      applied: false,
      done: [{ action: 'create', name: names[0] }],
      failed: {
        action: 'create',
        name: names[1],
        reason: expect.stringContaining(`cannot reach the jobs API at ${api}`),
      },
      not_applied: [{ action: 'create', name: names[2], job_id: null }],
    });
    expect(body.failed.reason).toContain('may or may not have been applied');
    expect(await h.env.store.jobGetByName(names[0]!)).not.toBeNull();
    expect(await h.env.store.jobGetByName(names[2]!)).toBeNull();

    const text = await cli(['apply', path]);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^applied 2 change\(s\): 2 created, 0 updated, 0 deleted, 1 unchanged$/m);
  });
});
