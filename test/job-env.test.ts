/** What a command job's environment holds, read from a real command's output: built, not the worker's. */
import { createJob, triggerJob } from '@jobs/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { engine } from './support/engine';
import { createTestEnv, eventually, type TestEnv } from './support/env';
import { jobSpec } from './support/fixtures';

let env: TestEnv;
let e: ReturnType<typeof engine>;

beforeEach(async () => {
  env = await createTestEnv('jobenv');
  e = engine(env);
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await e.stopAll();
  await env.cleanup();
});

/** Runs `env` as a command job and returns the variables it printed, by name. */
async function variablesOfARun(options: Parameters<typeof e.worker>[0] = {}): Promise<Map<string, string>> {
  const job = await createJob(e.deps, jobSpec({ handler: null, command: 'env', timezone: 'Asia/Tokyo' }));
  const { execution } = await triggerJob(e.deps, { jobId: job.id });
  await e.worker(options);
  const done = await eventually(async () => {
    const row = await env.store.executionGet(execution.id);
    return row?.status === 'succeeded' ? row : null;
  });
  const vars = new Map<string, string>();
  for (const line of done.output!.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0 && /^[A-Za-z_][A-Za-z0-9_]*$/.test(line.slice(0, eq))) vars.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return vars;
}

describe("a command job's environment", () => {
  it('holds exactly the documented variables: a canary in the worker does not reach it', async () => {
    vi.stubEnv('JOBS_TEST_CANARY', 'canary-7f3a');
    vi.stubEnv('PGPASSWORD', 'canary-pg-9b1c');
    vi.stubEnv('TRACEPARENT', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    const vars = await variablesOfARun();
    const documented = /^(PATH|LANG|LANGUAGE|LC_[A-Z_]+|TZ|HOME|USER|LOGNAME|PWD|SHLVL|_|JOB_[A-Z_]+|TRACEPARENT)$/;
    // PWD, SHLVL and _ are the shell's own (sh sets them at start), not inherited.
    expect([...vars.keys()].filter((name) => !documented.test(name))).toEqual([]);
    expect(vars.has('JOBS_TEST_CANARY')).toBe(false);
    expect(vars.has('PGPASSWORD')).toBe(false);
    expect(vars.has('TRACEPARENT')).toBe(false);
    expect(vars.get('TZ')).toBe('Asia/Tokyo');
    expect(vars.get('JOB_ATTEMPT')).toBe('1');
    expect(vars.has('PATH')).toBe(true);
  });

  it('gets the names JOB_ENV_PASSTHROUGH lists, and everything but the scheduler secrets with *', async () => {
    vi.stubEnv('JOBS_TEST_CANARY', 'canary-7f3a');
    vi.stubEnv('JOBS_TEST_OTHER', 'other-2d4e');
    vi.stubEnv('DATABASE_URL', 'postgres://u:canary-db@h/db');
    const listed = await variablesOfARun({ runner: { envPassthrough: ['JOBS_TEST_CANARY'] } });
    expect(listed.get('JOBS_TEST_CANARY')).toBe('canary-7f3a');
    expect(listed.has('JOBS_TEST_OTHER')).toBe(false);
    await e.stopAll(); // the next run must be this next worker's
    const all = await variablesOfARun({ runner: { envPassthrough: '*' } });
    expect(all.get('JOBS_TEST_OTHER')).toBe('other-2d4e');
    expect(all.has('DATABASE_URL')).toBe(false);
  });
});

describe("a command job's own variables", () => {
  it('reach its command, over a passed-through variable of the same name', async () => {
    vi.stubEnv('JOBS_TEST_CANARY', 'from-the-worker');
    const job = await createJob(
      e.deps,
      jobSpec({
        handler: null,
        command: 'echo "greeting=$GREETING canary=$JOBS_TEST_CANARY"',
        env: { GREETING: 'hello world', JOBS_TEST_CANARY: 'from-the-job' },
      }),
    );
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    await e.worker({ runner: { envPassthrough: ['JOBS_TEST_CANARY'] } });
    const done = await eventually(async () => {
      const row = await env.store.executionGet(execution.id);
      return row?.status === 'succeeded' ? row : null;
    });
    expect(done.output).toBe('greeting=hello world canary=from-the-job\n');
  });
});
