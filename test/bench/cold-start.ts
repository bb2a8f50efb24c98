/**
 * Cold-start proxy for the Lambda bundles: each bundle's size (what Lambda's init loads: the entry and the chunks it
 * imports statically; and the chunks only dynamic imports reach, built with code splitting as SST deploys them), and
 * in a fresh `node` process per run the time to import it (Lambda's init phase) and to serve a first request against the local PostgreSQL and Redis (api: the
 * GET /api/v1/jobs fixture; tick: one scheduled invocation), plus a second, warm one. The container worker is timed
 * from spawn to its `worker.started` line. Also builds api and tick with `@aws-sdk/*` left external (resolved from
 * node_modules, as the Lambda runtime's copy would be) to show what bundling the SDK costs or saves.
 *
 *   npm run bench:cold-start -- [--runs 7] [--only api,tick] [--json]
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURE_API_KEY } from '../fixtures/events';
import { ENTRIES, buildInvoker, bundleEntry, invokeBundle, type BuiltBundle, type Scenario } from '../lambda/bundle';
import { startPutEventsServer } from '../lambda/put-events-server';
import { spawnEntryFile } from '../lambda/spawn';
import { createTestEnv } from '../support/env';
import { ROOT } from '../support/processes';

const args = process.argv.slice(2);
const json = args.includes('--json');
const runs = Number(args[args.indexOf('--runs') + 1]) || 5;
/** Bundles to measure (all when absent). */
const only = args.includes('--only') ? new Set(String(args[args.indexOf('--only') + 1]).split(',')) : null;
const selected = ENTRIES.filter((e) => only === null || only.has(e.name));

interface Row {
  bundle: string;
  variant: 'sdk bundled' | 'sdk external';
  bytes: number;
  chunkBytes: number;
  gzipBytes: number;
  awsSdkBytes: number;
  scenario: string;
  importMs: number | null;
  firstMs: number | null;
  warmMs: number | null;
  processMs: number | null;
}

const SCENARIOS: Record<string, Scenario | 'container'> = {
  api: 'api-get',
  tick: 'tick',
  worker: 'import',
  migrate: 'import',
  'worker-process': 'container',
};

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? null : sorted[Math.floor(sorted.length / 2)]!;
};

async function main() {
  const bundled = mkdtempSync(join(tmpdir(), 'jobs-cold-start-'));
  // Inside the repository's node_modules, so the external @aws-sdk/* resolves like the runtime-provided copy.
  const external = join(ROOT, 'node_modules', '.cache', `jobs-cold-start-${process.pid}`);
  mkdirSync(external, { recursive: true });
  const env = await createTestEnv('coldstart');
  const bus = await startPutEventsServer();
  const childEnv = {
    ...env.childEnv,
    ...bus.env(),
    EVENT_BUS_NAME: 'bench-bus',
    API_KEYS: FIXTURE_API_KEY,
    LOG_LEVEL: 'warn',
  };
  const rows: Row[] = [];
  try {
    const invoker = await buildInvoker(bundled);
    const builds: [BuiltBundle, Row['variant']][] = [];
    for (const entry of selected) builds.push([await bundleEntry(entry, { outdir: bundled }), 'sdk bundled']);
    for (const entry of selected.filter((e) => e.name === 'api' || e.name === 'tick')) {
      builds.push([await bundleEntry(entry, { outdir: external, externalAwsSdk: true }), 'sdk external']);
    }
    for (const [bundle, variant] of builds) {
      const scenario = SCENARIOS[bundle.name]!;
      const samples: { importMs: number | null; firstMs: number | null; warmMs: number | null; processMs: number }[] =
        [];
      for (let i = 0; i < runs; i++) {
        if (scenario === 'container') {
          const started = performance.now();
          const child = spawnEntryFile(bundle.file, { ...childEnv, LOG_LEVEL: 'info', SHUTDOWN_GRACE: '1s' });
          await child.waitFor(/"event":"worker.started"/, 30_000);
          samples.push({ importMs: null, firstMs: null, warmMs: null, processMs: performance.now() - started });
          child.kill('SIGTERM');
          await child.exited;
        } else {
          const report = await invokeBundle(invoker, bundle.file, scenario, childEnv);
          samples.push(report);
        }
      }
      const pick = (key: 'importMs' | 'firstMs' | 'warmMs' | 'processMs') =>
        median(samples.map((s) => s[key]).filter((v): v is number => v !== null));
      rows.push({
        bundle: bundle.name,
        variant,
        bytes: bundle.bytes,
        chunkBytes: bundle.chunkBytes,
        gzipBytes: bundle.gzipBytes,
        awsSdkBytes: bundle.awsSdkBytes,
        scenario: scenario === 'container' ? 'spawn → worker.started' : scenario,
        importMs: pick('importMs'),
        firstMs: pick('firstMs'),
        warmMs: pick('warmMs'),
        processMs: pick('processMs'),
      });
    }
  } finally {
    await bus.close();
    await env.cleanup();
    rmSync(bundled, { recursive: true, force: true });
    rmSync(external, { recursive: true, force: true });
  }

  if (json) {
    process.stdout.write(`${JSON.stringify({ node: process.version, runs, rows }, null, 2)}\n`);
    return;
  }
  const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
  const ms = (n: number | null) => (n === null ? '-' : `${n.toFixed(0)} ms`);
  const table = [
    [
      'bundle',
      'variant',
      'init load',
      'lazy chunks',
      'gzip',
      'of it AWS SDK',
      'scenario',
      'import',
      'first call',
      'warm call',
      'process',
    ],
    ...rows.map((r) => [
      r.bundle,
      r.variant,
      kb(r.bytes),
      kb(r.chunkBytes),
      kb(r.gzipBytes),
      kb(r.awsSdkBytes),
      r.scenario,
      ms(r.importMs),
      ms(r.firstMs),
      ms(r.warmMs),
      ms(r.processMs),
    ]),
  ];
  const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
  const line = (row: string[]) => row.map((cell, c) => cell.padEnd(widths[c]!)).join('  ');
  console.log(
    `cold-start proxy: node ${process.version}, median of ${runs} fresh processes each, minified ESM bundles`,
  );
  console.log(line(table[0]!));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of table.slice(1)) console.log(line(row));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
