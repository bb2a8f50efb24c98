/**
 * `npm run test:faults`: the fault-injection suite. Starts a private PostgreSQL cluster and Redis (never the shared
 * servers), runs every scenario against real processes under load, checks the books after each, prints one line
 * per scenario and exits 1 if any failed.
 *
 * Usage: node --import tsx test/faults/run.ts [scenario-name-substring ...]
 * Scenarios marked `postgresQueue` run a second time with the queue on PostgreSQL (named "... [pg queue]").
 * Env:   FAULTS_QUEUE=redis|postgres runs only that queue's runs; FAULTS_SEED=<n> replays a run's random choices; FAULTS_KEEP_LOGS=1 keeps the process logs of a passing run;
 *        FAULTS_KNOWN_BUGS=1 also runs the scenarios skipped for a known engine bug (naming one runs it too).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killAllLive } from './harness';
import { SCENARIOS } from './scenarios';
import { cleanupLeftovers, startServers, type Servers } from './servers';
import type { ScenarioResult } from './types';

async function main(): Promise<number> {
  const filters = process.argv.slice(2);
  const selected = SCENARIOS.filter((s) => filters.length === 0 || filters.some((f) => s.name.includes(f)));
  const runKnownBugs = filters.length > 0 || process.env.FAULTS_KNOWN_BUGS === '1';
  if (selected.length === 0) {
    process.stderr.write(
      `no scenario matches ${filters.join(' ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}\n`,
    );
    return 2;
  }
  // Scenarios that apply to the PostgreSQL queue run once more on it (FAULTS_QUEUE=redis or postgres: only that one).
  const queues = (['redis', 'postgres'] as const).filter(
    (q) => !process.env.FAULTS_QUEUE || process.env.FAULTS_QUEUE === q,
  );
  const runs = selected.flatMap((def) =>
    queues
      .filter((q) => q === 'redis' || def.postgresQueue)
      .map((queue) => ({ def, queue, name: queue === 'redis' ? def.name : `${def.name} [pg queue]` })),
  );
  const seed = Number(process.env.FAULTS_SEED ?? Date.now() % 1_000_000);
  const started = Date.now();
  const log = (message: string) =>
    process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${message}\n`);

  const leftovers = cleanupLeftovers();
  if (leftovers.length > 0) log(`cleaned up ${leftovers.length} leftover private server(s) of an interrupted run`);
  const logRoot = mkdtempSync(join(tmpdir(), 'jobs-faults-logs-'));
  let servers: Servers | null = null;
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log(`${signal}: stopping processes and private servers`);
    killAllLive();
    void (servers?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', () => killAllLive());
  // A scenario's stray background promise must not take the whole run (and its cleanup) down.
  process.on('unhandledRejection', (error) =>
    log(`unhandled rejection (reported, run continues): ${(error as Error)?.stack ?? String(error)}`),
  );

  const results: ScenarioResult[] = [];
  const skipped: { name: string; why: string }[] = [];
  try {
    servers = await startServers();
    log(`private PostgreSQL ${servers.pg.url}, Redis ${servers.redis.url}; seed ${seed}; logs in ${logRoot}`);
    for (const { def, queue, name } of runs) {
      if (interrupted) break;
      const knownBug = def.knownBug;
      if (knownBug && !runKnownBugs) {
        skipped.push({ name, why: knownBug });
        log(`--- ${name}: SKIPPED (known bug: ${knownBug})`);
        continue;
      }
      const t0 = Date.now();
      log(`--- ${name}`);
      let result: ScenarioResult;
      try {
        // Every scenario starts from a Redis that answers (a previous one may have killed it).
        if (!(await servers.redis.ping())) await servers.redis.start();
        const r = await def.run({ servers, logRoot, seed, queue, log: (m) => log(`  ${m}`) });
        result = { name, ms: Date.now() - t0, ...r };
      } catch (error) {
        result = {
          name,
          acknowledged: 0,
          lost: 0,
          duplicated: 0,
          recovery: '-',
          pass: false,
          problems: [`scenario crashed: ${(error as Error).stack ?? String(error)}`],
          notes: [],
          ms: Date.now() - t0,
        };
      } finally {
        killAllLive();
      }
      results.push(result);
      for (const n of result.notes) log(`  note: ${n}`);
      for (const p of result.problems) log(`  PROBLEM: ${p}`);
      if (knownBug) log(`  known bug: ${knownBug}${result.pass ? ' (it passed: fixed? remove knownBug)' : ''}`);
      log(`  ${result.pass ? 'PASS' : 'FAIL'} in ${(result.ms / 1000).toFixed(1)}s`);
    }
  } finally {
    killAllLive();
    await servers?.stop();
  }

  const passed = results.filter((r) => r.pass).length;
  const failed = results.length - passed;
  const lines = [
    '',
    'scenario | acknowledged | lost | duplicated | recovery | result',
    ...results.map(
      (r) =>
        `${r.name} | ${r.acknowledged} | ${r.lost} | ${r.duplicated} | ${r.recovery} | ${r.pass ? 'PASS' : 'FAIL'}`,
    ),
    ...skipped.map((s) => `${s.name} | - | - | - | - | SKIPPED (known bug)`),
    `${passed} passed, ${failed} failed${skipped.length > 0 ? `, ${skipped.length} skipped (known bugs)` : ''} (${((Date.now() - started) / 1000).toFixed(0)}s, seed ${seed})`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (failed === 0 && !process.env.FAULTS_KEEP_LOGS) rmSync(logRoot, { recursive: true, force: true });
  else process.stdout.write(`process logs: ${logRoot}\n`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`fault suite failed to run: ${(error as Error).stack ?? String(error)}\n`);
    killAllLive();
    process.exit(1);
  },
);
