/**
 * http: N HTTP-target jobs already queued, drained by ONE worker process (functions/worker-process.ts, signing on,
 * HTTP_TARGET_ALLOW=127.0.0.1) against a no-op receiver in a process of its own (test/bench/http-receiver.ts).
 * Reports jobs/s (N / (max(finished_at) - min(started_at)) by the PostgreSQL clock), the receiver's CPU (of one
 * core, and as a share of all the CPU the machine spent in the window), and the p50 overhead of a request over the
 * receiver's own time (the attempt's recorded duration minus the receiver's p50 handling time). Every job must
 * succeed once and reach the receiver once (unique Jobs-Execution-Id == N).
 */
import { createJob } from '@jobs/core';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { jobSpec } from '../../support/fixtures';
import { benchEnv } from '../lib/envs';
import { commandDeps, dbWindow, enqueueBulk, spawnWorker, waitNoLive, waitRegistered } from '../lib/ours';
import { ROOT, sampler, spawnNode } from '../lib/proc';
import type { Collector } from '../lib/result';
import { sleep } from '../lib/stats';
import { verifyDrain } from '../lib/verify';
import { describeProfile } from './profile';

interface ReceiverStats {
  count: number;
  unique: number;
  ownP50Us: number;
  ownP99Us: number;
  cpuS: number;
}

export async function httpScenario(
  c: Collector,
  o: { n: number; concurrency: number; runs: number; profile: boolean; progress: (m: string) => void },
): Promise<void> {
  for (let run = 0; run < o.runs; run++) {
    const label = `run ${run + 1}`;
    const receiver = spawnNode('test/bench/http-receiver.ts', {}, { stdout: 'pipe' });
    const env = await benchEnv('bench_http');
    try {
      const readyBy = Date.now() + 30_000;
      while (!/listening (\d+)/.test(receiver.output()) && Date.now() < readyBy) await sleep(10);
      const port = /listening (\d+)/.exec(receiver.output())?.[1];
      if (!port) throw new Error(`receiver did not start:\n${receiver.output()}`);
      const base = `http://127.0.0.1:${port}`;
      const stats = async () => (await (await fetch(`${base}/__stats`)).json()) as ReceiverStats;

      const job = await createJob(
        commandDeps(env),
        jobSpec({
          handler: null,
          http: { url: `${base}/hook`, method: 'POST', headers: { authorization: 'Bearer bench' } },
        }),
      );
      await enqueueBulk(env, job.id, o.n, 5000);
      o.progress(`http ${label}: ${o.n} queued; starting worker (C=${o.concurrency})`);
      // Profiled: instrument.mjs starts a CPU profile at the first SIGUSR2 and writes it (and the PostgreSQL and
      // Redis call timings) at the second, so the profile covers the drain window only, not the start-up.
      const profileDir = o.profile ? mkdtempSync(join(tmpdir(), 'bench-http-prof-')) : null;
      const timingsFile = profileDir ? join(profileDir, 'worker-timings.json') : null;
      const worker = spawnWorker(env, {
        concurrency: o.concurrency,
        logLevel: 'warn',
        nodeArgs: profileDir ? ['--import', join(ROOT, 'test/bench/lib/instrument.mjs')] : undefined,
        extraEnv: {
          HTTP_TARGET_ALLOW: '127.0.0.1',
          HTTP_SIGNING_SECRET: 'bench-signing-secret',
          ...(timingsFile ? { BENCH_INSTRUMENT_OUT: timingsFile } : {}),
        },
      });
      const ws = sampler(worker.pid);
      const rs = sampler(receiver.pid);
      let w: ReturnType<typeof ws.end> | null = null;
      let r: ReturnType<typeof rs.end> | null = null;
      try {
        await waitRegistered(env, worker);
        if (timingsFile) worker.child.kill('SIGUSR2');
        ws.rebase();
        rs.rebase();
        const { stalled } = await waitNoLive(env, worker);
        w = ws.end();
        r = rs.end();
        if (timingsFile) {
          worker.child.kill('SIGUSR2');
          const deadline = Date.now() + 30_000;
          while (!worker.output().includes('instrument: written') && Date.now() < deadline) await sleep(50);
        }
        if (stalled)
          c.check(
            'drain finished',
            false,
            `no progress for 60 s or the worker died:\n${worker.output().slice(-2000)}`,
            label,
          );
      } finally {
        ws.end();
        rs.end();
        const exit = await worker.stop();
        c.check(
          'worker process exited 0 on SIGTERM',
          exit.code === 0,
          `exit ${JSON.stringify(exit)}\n${worker.output().slice(-2000)}`,
          label,
        );
      }
      if (profileDir && timingsFile) {
        const file = `${timingsFile}.cpuprofile`;
        // Kept for a closer look (Chrome DevTools, speedscope): the summary below is self time only.
        if (existsSync(file)) {
          describeProfile(c, 'worker', file, o.n);
          describeTimings(c, timingsFile, o.n);
          c.note(`worker profile kept in ${file}`);
        } else rmSync(profileDir, { recursive: true, force: true });
      }
      const window = await dbWindow(env);
      await verifyDrain(c, env.pool, env.queue, o.n, label);
      const got = await stats();
      c.check(
        'receiver: every job delivered exactly once (requests == unique execution ids == N)',
        got.count === o.n && got.unique === o.n,
        JSON.stringify(got),
        label,
      );
      const { rows } = await env.pool.query(
        `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50,
                percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) AS p99
         FROM executions WHERE status = 'succeeded'`,
      );
      const jobsPerSec = o.n / window.seconds;
      c.add('http: jobs/s', 'jobs/s', jobsPerSec, { target: { op: '>=', value: 5000 } });
      if (w && r) {
        const machineCpuS = (w.machineBusyPct / 100) * w.wallS * cpus().length;
        c.add('receiver CPU', '% of 1 core', (r.processCpuS / r.wallS) * 100, { info: true });
        c.add(
          "receiver share of the machine's CPU in the window",
          '%',
          machineCpuS > 0 ? (r.processCpuS / machineCpuS) * 100 : Number.NaN,
          { info: true },
        );
        c.add('worker CPU', '% of 1 core', (w.processCpuS / w.wallS) * 100, { info: true });
        c.add('worker CPU per request', 'µs', (w.processCpuS / o.n) * 1e6, { info: true });
        c.add('postgres CPU (all backends)', '% of 1 core', (w.postgresCpuS / w.wallS) * 100, { info: true });
        c.add('machine busy', '% of all cores', w.machineBusyPct, { info: true });
      }
      c.add('receiver own time p50', 'µs', got.ownP50Us, { info: true });
      c.add('attempt duration p50 (worker, ms resolution)', 'ms', Number(rows[0].p50), { info: true });
      c.add('attempt duration p99', 'ms', Number(rows[0].p99), { info: true });
      c.add("p50 overhead per request over the receiver's own time", 'ms', Number(rows[0].p50) - got.ownP50Us / 1000, {
        info: true,
      });
      o.progress(`http ${label}: ${Math.round(jobsPerSec)} jobs/s; receiver ${got.count} requests`);
    } finally {
      await env.cleanup();
      await receiver.stop();
    }
  }
  c.note(
    "attempt duration = the worker's own measure of an attempt (runner start to result, including waiting for a connection of the pool), recorded in whole ms; the overhead subtracts the receiver's p50 handling time",
  );
}

/** PostgreSQL statements and Redis commands of the drain window: how many, per 1,000 requests, and their round trip. */
function describeTimings(c: Collector, file: string, n: number): void {
  const timings = JSON.parse(readFileSync(file, 'utf8')) as Record<
    'pool' | 'redis',
    Record<string, { n: number; ms: number }>
  >;
  for (const [table, label] of [
    ['pool', 'pg'],
    ['redis', 'redis'],
  ] as const) {
    for (const [key, v] of Object.entries(timings[table])
      .sort((a, b) => b[1].n - a[1].n)
      .slice(0, 5)) {
      c.note(
        `worker ${label}: ${v.n} calls (${((v.n / n) * 1000).toFixed(0)} per 1k requests), ${(v.ms / v.n).toFixed(2)} ms avg :: ${key}`,
      );
    }
  }
}
