/**
 * latency: trigger-to-start and trigger-to-recorded-success under an open-loop load at a fraction (default 50%) of
 * the drain rate measured in this run. A timer fires triggers (core triggerJob: INSERT + push) at a fixed rate
 * whatever happens to them, so queueing anywhere shows up in the figures (no coordinated omission).
 * Both ends come from the PostgreSQL clock: queued_at is now() of the INSERT, started_at is the worker's start
 * instant as written by its recorder (now() of the write minus the time the attempt has been running), finished_at is
 * now() of the outcome's write.
 */
import { triggerJob } from '@jobs/core';
import { createStore } from '@jobs/store';
import pg from 'pg';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

import { commandDeps, noopJob, spawnWorker, waitNoLive, waitRegistered } from '../lib/ours';
import { benchEnv } from '../lib/envs';
import { ROOT } from '../lib/proc';
import { Collector } from '../lib/result';
import { median, percentiles, sleep } from '../lib/stats';
import { verifyDrain } from '../lib/verify';
import type { BenchContext } from '../run';
import { oursDrainOnce } from './drain';

export async function latencyScenario(c: Collector, ctx: BenchContext, runs: number): Promise<void> {
  const { opts, progress } = ctx;
  let rate = opts['latency-rate'];
  if (!rate) {
    if (ctx.drainRates.length === 0) {
      progress('latency: no drain measured in this run yet; measuring one (LOG_LEVEL=warn) to pace the load');
      const calib = await oursDrainOnce(new Collector(), { n: opts.n, concurrency: opts.concurrency, logLevel: 'warn', label: 'calibration', progress });
      ctx.drainRates.push(calib.jobsPerSec);
    }
    // The pipeline's maximum for single triggers is the lower of what one process can insert one by one and what a
    // worker drains; 50% of that is the load at which queueing should still be rare.
    const drain = median(ctx.drainRates);
    const inserts = await triggerCapacity(ctx);
    rate = Math.round(Math.min(drain, inserts) * opts['latency-fraction']);
    c.note(`rate = ${opts['latency-fraction']} x min(drain median ${Math.round(drain)} jobs/s, single-trigger capacity ${Math.round(inserts)}/s measured closed-loop from this process) = ${rate} triggers/s`);
  }
  c.add('offered trigger rate', 'triggers/s', rate, { info: true });
  for (let run = 0; run < runs; run++) await once(c, ctx, rate, `run ${run + 1}`);
}

/** Single triggers per second one process sustains closed-loop with the generator's pool (no worker running). */
async function triggerCapacity(ctx: BenchContext): Promise<number> {
  const { opts } = ctx;
  const env = await benchEnv('bench_latency_cap');
  try {
    const jobId = await noopJob(env);
    const genPool = new pg.Pool({ connectionString: env.childEnv.DATABASE_URL, max: opts['latency-pool'] });
    genPool.on('error', () => undefined);
    const deps = { ...commandDeps(env), store: createStore(genPool) };
    try {
      for (let i = 0; i < 200; i++) await triggerJob(deps, { jobId });
      let sent = 0;
      const total = 6000;
      const t = performance.now();
      await Promise.all(
        Array.from({ length: opts['latency-pool'] }, async () => {
          while (sent++ < total) await triggerJob(deps, { jobId });
        }),
      );
      return total / ((performance.now() - t) / 1000);
    } finally {
      await genPool.end();
    }
  } finally {
    await env.cleanup();
  }
}

/**
 * One open-loop run. With `breakdown`, the worker runs with test/bench/lib/instrument.mjs (BENCH_MARKS=1) and each
 * execution's path is split into stages by wall-clock instants taken in both processes (same host clock):
 * queued_at (DB) -> trigger call returned (INSERT committed and id pushed, this process) -> claim reply in the
 * worker -> read of the claimed row returned in the worker -> started_at (DB).
 */
export async function latencyOnce(c: Collector, ctx: BenchContext, rate: number, subject: string, breakdown?: { dir: string }): Promise<void> {
  return once(c, ctx, rate, subject, breakdown);
}

async function once(c: Collector, ctx: BenchContext, rate: number, subject: string, breakdown?: { dir: string }): Promise<void> {
  const { opts, progress } = ctx;
  const marksFile = breakdown ? join(breakdown.dir, `latency-marks-${Date.now()}.json`) : '';
  const env = await benchEnv('bench_latency');
  try {
    const jobId = await noopJob(env);
    // The load generator's own pool (like an API fleet's many connections): commits group in PostgreSQL, so one
    // process can offer more single INSERTs per second than a 10-connection pool would.
    const genPool = new pg.Pool({ connectionString: env.childEnv.DATABASE_URL, max: opts['latency-pool'] });
    genPool.on('error', () => undefined);
    const deps = { ...commandDeps(env), store: createStore(genPool) };
    const worker = spawnWorker(env, {
      concurrency: opts.concurrency,
      logLevel: 'warn',
      ...(breakdown
        ? { nodeArgs: ['--import', join(ROOT, 'test/bench/lib/instrument.mjs')], extraEnv: { BENCH_INSTRUMENT_OUT: marksFile, BENCH_MARKS: '1' } }
        : {}),
    });
    try {
      await waitRegistered(env, worker);
      // Warm-up: a short burst at the same rate (JIT, pool connections on both sides); excluded below by id.
      for (let i = 0; i < 200; i++) await triggerJob(deps, { jobId });
      await waitNoLive(env, worker);
      const { rows: warmRows } = await env.pool.query(`SELECT coalesce(max(id), 0)::text AS id FROM executions`);
      const afterId = warmRows[0].id as string;
      const warmCount = 200;

      const total = Math.round(rate * opts['latency-seconds']);
      progress(`latency ${subject}: ${total} triggers at ${rate}/s, open loop`);
      if (breakdown) {
        worker.child.kill('SIGUSR2');
        await sleep(200);
      }
      const intended = new Map<string, number>();
      const returned = new Map<string, number>();
      let errors = 0;
      let next = 0;
      const eld = monitorEventLoopDelay({ resolution: 5 });
      eld.enable();
      const t0 = performance.now();
      const origin = performance.timeOrigin;
      // Trigger i is due at t0 + i/rate. `latency-pool` senders take the next due trigger, wait for its time, and send
      // it; when they fall behind they send at once, and the delay shows as trigger call lag (no unbounded queue in
      // this process, whose own CPU would then distort the figures).
      const pending = Array.from({ length: opts['latency-pool'] }, async () => {
        for (;;) {
          const i = next++;
          if (i >= total) return;
          const dueAt = t0 + (i * 1000) / rate;
          const wait = dueAt - performance.now();
          if (wait > 1) await sleep(wait);
          try {
            const r = await triggerJob(deps, { jobId });
            intended.set(r.execution.id, origin + dueAt);
            returned.set(r.execution.id, origin + performance.now());
          } catch {
            errors++;
          }
        }
      });
      await Promise.all(pending);
      eld.disable();
      const { stalled } = await waitNoLive(env, worker);
      if (breakdown) {
        worker.child.kill('SIGUSR2');
        const by = Date.now() + 30_000;
        while (!worker.output().includes('instrument: written') && Date.now() < by) await sleep(50);
      }
      c.check('load finished', !stalled && errors === 0, `stalled=${stalled} trigger errors=${errors}`, subject);

      const warmupMs = opts['latency-warmup-seconds'] * 1000;
      const { rows } = await env.pool.query(
        `SELECT id::text AS id,
                extract(epoch FROM queued_at) * 1000 AS queued,
                extract(epoch FROM started_at - queued_at) * 1000 AS to_start,
                extract(epoch FROM finished_at - queued_at) * 1000 AS to_done,
                extract(epoch FROM started_at) * 1000 AS started
         FROM executions WHERE id > $1 AND status = 'succeeded' ORDER BY id`,
        [afterId],
      );
      const firstQueued = rows.length ? Number(rows[0].queued) : 0;
      const measured = rows.filter((r) => Number(r.queued) - firstQueued >= warmupMs);
      const toStart = measured.map((r) => Number(r.to_start));
      const toDone = measured.map((r) => Number(r.to_done));
      const lag = measured.filter((r) => intended.has(r.id)).map((r) => Number(r.queued) - intended.get(r.id)!);
      const fromIntended = measured.filter((r) => intended.has(r.id)).map((r) => Number(r.started) - intended.get(r.id)!);
      const ps = percentiles(toStart);
      const pi = percentiles(fromIntended);
      const pd = percentiles(toDone);
      const pl = percentiles(lag);
      if (breakdown && existsSync(marksFile)) {
        const marks = JSON.parse(readFileSync(marksFile, 'utf8')).marks as { claimed: Record<string, number>; loaded: Record<string, number> };
        const stages: Record<string, number[]> = {
          'queued_at -> trigger call returned (INSERT commit + push)': [],
          'trigger call returned -> claim reply in worker': [],
          'claim reply -> claimed row read (executionsLoad)': [],
          'row read -> started_at': [],
        };
        const keys = Object.keys(stages);
        for (const r of measured) {
          const q = Number(r.queued);
          const ret = returned.get(r.id);
          const cl = marks.claimed[r.id];
          const ld = marks.loaded[r.id];
          if (ret === undefined || cl === undefined || ld === undefined) continue;
          stages[keys[0]!]!.push(ret - q);
          stages[keys[1]!]!.push(cl - ret);
          stages[keys[2]!]!.push(ld - cl);
          stages[keys[3]!]!.push(Number(r.started) - ld);
        }
        for (const [stage, values] of Object.entries(stages)) {
          const p = percentiles(values);
          c.add(`breakdown: ${stage} p50`, 'ms', p.p50!, { info: true });
          c.add(`breakdown: ${stage} p99`, 'ms', p.p99!, { info: true });
        }
        c.note('breakdown instants: queued_at and started_at from PostgreSQL, the others from each process\'s wall clock (one host, one clock); a negative "returned -> claim" means the worker claimed the id before the trigger call got its push reply');
      }
      c.add('trigger -> start p50', 'ms', ps.p50!, { target: { op: '<=', value: 5 } });
      c.add('trigger -> start p95', 'ms', ps.p95!);
      c.add('trigger -> start p99', 'ms', ps.p99!, { target: { op: '<=', value: 25 } });
      c.add('trigger -> recorded success p50', 'ms', pd.p50!);
      c.add('trigger -> recorded success p95', 'ms', pd.p95!);
      c.add('trigger -> recorded success p99', 'ms', pd.p99!);
      const span = await env.pool.query(
        `SELECT extract(epoch FROM max(queued_at) - min(queued_at))::float8 AS s FROM executions WHERE id > $1`,
        [afterId],
      );
      c.add('achieved insert rate (DB clock)', 'triggers/s', total / span.rows[0].s, { info: true });
      c.add('load generator event-loop delay p99', 'ms', eld.percentile(99) / 1e6, { info: true });
      c.add('trigger call lag p50 (queued_at - intended)', 'ms', pl.p50!, { info: true });
      c.add('trigger call lag p99 (queued_at - intended)', 'ms', pl.p99!, { info: true });
      c.add('intended trigger time -> start p50', 'ms', pi.p50!, { info: true });
      c.add('intended trigger time -> start p99', 'ms', pi.p99!, { info: true });
      if (pl.p99! > 100) {
        c.note(`${subject}: the load generator fell behind (trigger call lag p99 ${Math.round(pl.p99!)} ms): triggerJob from this process did not sustain ${rate}/s, so the offered load was lower and burstier than planned; "intended -> start" counts that wait, "trigger -> start" (DB clock, from queued_at) does not`);
      }
      progress(`latency ${subject}: start p50 ${ps.p50!.toFixed(1)} p99 ${ps.p99!.toFixed(1)} ms; success p50 ${pd.p50!.toFixed(1)} p99 ${pd.p99!.toFixed(1)} ms`);
      c.note(`the first ${opts['latency-warmup-seconds']} s of load are excluded; trigger call lag shows how late the trigger's INSERT ran against the timer (client pool queueing)`);
      await verifyDrain(c, env.pool, env.queue, total + warmCount, subject);
    } finally {
      await worker.stop();
      await genPool.end();
    }
  } finally {
    await env.cleanup();
  }
}
