/**
 * profile (diagnostic, only with --only=profile): where the time goes.
 *   1. A drain of `profile-n` no-op jobs by one worker process (LOG_LEVEL=warn) with test/bench/lib/instrument.mjs
 *      preloaded: a V8 CPU profile of the drain window, and the time of every PostgreSQL statement and Redis command
 *      as the worker saw it (round trip, and for pool.query also the wait for a free connection).
 *   2. The HTTP trigger path in this process (server side only; the client is a worker thread), CPU-profiled the
 *      same way.
 * Files are kept under $TMPDIR/jobs-bench-profile-<time>/ for a closer look (Chrome DevTools, speedscope).
 */
import { Session } from 'node:inspector';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { summariseProfile } from '../lib/cpuprofile';
import { dbWindow, enqueueBulk, noopJob, spawnWorker, waitNoLive, waitRegistered } from '../lib/ours';
import { benchEnv } from '../lib/envs';
import { ROOT, sampler } from '../lib/proc';
import type { Collector } from '../lib/result';
import { sleep } from '../lib/stats';
import { verifyDrain } from '../lib/verify';
import type { BenchContext } from '../lib/options';
import { httpTrigger } from './enqueue';
import { latencyOnce } from './latency';

type Timings = Record<'pg' | 'pool' | 'redis', Record<string, { n: number; ms: number; max: number }>>;

export async function profileScenario(c: Collector, ctx: BenchContext): Promise<void> {
  const dir = join(tmpdir(), `jobs-bench-profile-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(dir, { recursive: true });
  c.note(`profiles and timings kept in ${dir}`);
  await workerProfile(c, ctx, dir);
  ctx.progress(`profile: latency breakdown at ${ctx.opts['profile-rate']} triggers/s`);
  await latencyOnce(c, ctx, ctx.opts['profile-rate'], 'breakdown', { dir });
  await postgresAlone(c, ctx);
  await httpProfile(c, ctx, dir);
}

/**
 * The worker's two hot statements run from this (otherwise idle) process without Redis or a runner: the read of
 * claimed rows (batches of claimBatch = 25 at concurrency 50) and the recorder's write (outcomes only, as no-op
 * attempts finish before their start is written), one statement at a time as the recorder does, and two at a time.
 */
async function postgresAlone(c: Collector, ctx: BenchContext): Promise<void> {
  const n = Math.min(ctx.opts['profile-n'], 20_000);
  const env = await benchEnv('bench_profile_pg');
  try {
    const jobId = await noopJob(env);
    const ids: string[] = [];
    for (let i = 0; i < n; i += 5000) {
      const created = await env.store.executionsEnqueueMany({
        jobId,
        payloads: Array.from({ length: Math.min(5000, n - i) }, () => null),
      });
      ids.push(...created.map((x) => x.id));
    }
    const claimBatch = Math.ceil(ctx.opts.concurrency / 2);
    let t = performance.now();
    let loads = 0;
    for (let i = 0; i < Math.min(n, 5000); i += claimBatch) {
      await env.store.executionsLoad(ids.slice(i, i + claimBatch).map((id) => ({ id, token: 't' })));
      loads++;
    }
    const loadMs = (performance.now() - t) / loads;
    c.add(`PostgreSQL alone: executionsLoad of ${claimBatch}`, 'ms/statement', loadMs, { info: true });
    const outcome = (id: string) => ({
      id,
      token: `t${id}`,
      jobId,
      attempt: 1,
      lane: 'short' as const,
      priority: 0,
      status: 'succeeded' as const,
      exitCode: null,
      output: '',
      error: null,
      durationMs: 0,
      retryDelayMs: null,
      workerId: 'w',
    });
    let next = 0;
    const run = async (streams: number, count: number, batch: number) => {
      const stop = next + count;
      let statements = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: streams }, async () => {
          while (next < stop) {
            const slice = ids.slice(next, Math.min(stop, next + batch));
            next += slice.length;
            await env.store.executionsRecord({
              workerId: 'w',
              leaseMs: 30_000,
              starts: [],
              outcomes: slice.map(outcome),
            });
            statements++;
          }
        }),
      );
      const ms = performance.now() - t0;
      return { rowsPerSec: count / (ms / 1000), msPerStatement: (ms * streams) / statements };
    };
    // One writer at several batch sizes (fixed cost per statement vs cost per row), then 2 and 4 writers.
    const share = Math.floor(n / 7);
    for (const batch of [25, 100, 400, 1000]) {
      const r = await run(1, share, batch);
      c.add(`PostgreSQL alone: recorder write x${batch}, 1 writer`, 'rows/s', r.rowsPerSec, { info: true });
      c.add(`PostgreSQL alone: recorder write x${batch}, 1 writer, per statement`, 'ms', r.msPerStatement, {
        info: true,
      });
    }
    for (const streams of [2, 4]) {
      const r = await run(streams, streams === 4 ? n - next : share, 100);
      c.add(`PostgreSQL alone: recorder write x100, ${streams} writers`, 'rows/s', r.rowsPerSec, { info: true });
      c.add(`PostgreSQL alone: recorder write x100, ${streams} writers, per statement`, 'ms', r.msPerStatement, {
        info: true,
      });
    }
    const d = await env.pool.query(`SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS s FROM executions`);
    c.check('PostgreSQL alone: every outcome recorded once', d.rows[0].s === n, JSON.stringify(d.rows[0]), 'pg alone');
  } finally {
    await env.cleanup();
  }
}

async function workerProfile(c: Collector, ctx: BenchContext, dir: string): Promise<void> {
  const { opts, progress } = ctx;
  const n = opts['profile-n'];
  const out = join(dir, 'worker-timings.json');
  const env = await benchEnv('bench_profile');
  try {
    const jobId = await noopJob(env);
    await enqueueBulk(env, jobId, n, 5000);
    const worker = spawnWorker(env, {
      concurrency: opts.concurrency,
      logLevel: 'warn',
      nodeArgs: ['--import', join(ROOT, 'test/bench/lib/instrument.mjs')],
      extraEnv: { BENCH_INSTRUMENT_OUT: out },
    });
    const s = sampler(worker.pid);
    try {
      await waitRegistered(env, worker);
      worker.child.kill('SIGUSR2');
      s.rebase();
      await waitNoLive(env, worker);
      worker.child.kill('SIGUSR2');
      const deadline = Date.now() + 30_000;
      while (!worker.output().includes('instrument: written') && Date.now() < deadline) await sleep(50);
    } finally {
      s.end();
      await worker.stop();
    }
    const stats = s.end();
    const w = await dbWindow(env);
    await verifyDrain(c, env.pool, env.queue, n, 'profiled drain');
    c.add('profiled drain', 'jobs/s', n / w.seconds, { info: true });
    c.add('profiled drain: worker CPU', '% of 1 core', (stats.processCpuS / stats.wallS) * 100, { info: true });
    c.add('profiled drain: postgres CPU (all backends)', '% of 1 core', (stats.postgresCpuS / stats.wallS) * 100, {
      info: true,
    });
    c.add('profiled drain: redis CPU', '% of 1 core', (stats.redisCpuS / stats.wallS) * 100, { info: true });
    if (!existsSync(`${out}.cpuprofile`)) {
      c.check('worker profile written', false, worker.output().slice(-2000));
      return;
    }
    describeProfile(c, 'worker', `${out}.cpuprofile`, n);
    const timings = JSON.parse(readFileSync(out, 'utf8')) as Timings;
    const wallMs = w.seconds * 1000;
    const eld = (timings as unknown as { eventLoopDelay?: { p50: number; p99: number; max: number } }).eventLoopDelay;
    if (eld) {
      c.add('worker event-loop delay p50', 'ms', eld.p50, { info: true });
      c.add('worker event-loop delay p99', 'ms', eld.p99, { info: true });
    }
    for (const [table, label] of [
      ['pg', 'pg client round trip'],
      ['pool', 'pg pool.query (incl. wait for a connection)'],
      ['redis', 'redis'],
    ] as const) {
      const rows = Object.entries(timings[table])
        .sort((a, b) => b[1].ms - a[1].ms)
        .slice(0, 4);
      for (const [key, v] of rows) {
        c.note(
          `worker ${label}: ${v.n} calls, ${(v.ms / v.n).toFixed(2)} ms avg, max ${v.max.toFixed(1)} ms, sum ${Math.round(v.ms)} ms (${((v.ms / wallMs) * 100).toFixed(0)}% of the drain window) :: ${key}`,
        );
      }
    }
    progress(`profile: worker drain ${Math.round(n / w.seconds)} jobs/s; profile in ${dir}`);
  } finally {
    await env.cleanup();
  }
}

async function httpProfile(c: Collector, ctx: BenchContext, dir: string): Promise<void> {
  const { opts, progress } = ctx;
  const env = await benchEnv('bench_profile_http');
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<any>((resolve, reject) => session.post(method, params ?? {}, (e, r) => (e ? reject(e) : resolve(r))));
  try {
    const jobId = await noopJob(env);
    await httpTrigger(env, jobId, 300, opts['http-concurrency']); // warm-up
    await post('Profiler.enable');
    await post('Profiler.setSamplingInterval', { interval: 250 });
    await post('Profiler.start');
    const http = await httpTrigger(env, jobId, opts['http-n'], opts['http-concurrency']);
    const { profile } = await post('Profiler.stop');
    const file = join(dir, 'http-server.cpuprofile');
    writeFileSync(file, JSON.stringify(profile));
    c.add('profiled HTTP trigger', 'req/s', http.rate, { info: true });
    describeProfile(c, 'HTTP server', file, opts['http-n']);
    progress(`profile: HTTP ${Math.round(http.rate)} req/s`);
  } finally {
    session.disconnect();
    await env.cleanup();
  }
}

export function describeProfile(c: Collector, who: string, file: string, units: number): void {
  const p = summariseProfile(file, 20);
  c.add(
    `${who}: sampled CPU per unit of work`,
    'ms/1k',
    ((p.totalMs - (p.groups.find((g) => g.group === '(idle)')?.selfMs ?? 0)) / units) * 1000,
    { info: true },
  );
  c.note(
    `${who} profile, self time by area: ${p.groups
      .slice(0, 14)
      .map((g) => `${g.group} ${g.selfPct.toFixed(1)}%`)
      .join(', ')}`,
  );
  for (const f of p.functions.slice(0, 20)) c.note(`${who} top self: ${f.selfPct.toFixed(1)}% ${f.name} ${f.where}`);
}
