/**
 * latency: trigger-to-start and trigger-to-recorded-success under an open-loop load at a fraction (default 50%) of
 * the pipeline's capacity measured in this run (closed-loop single triggers while a worker runs them). A timer fires triggers (core triggerJob: INSERT + push) at a fixed rate
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
import { percentiles, sleep } from '../lib/stats';
import { verifyDrain } from '../lib/verify';
import type { BenchContext } from '../lib/options';
import { bullLatencyOnce } from './latency-bullmq';

export async function latencyScenario(c: Collector, ctx: BenchContext, runs: number): Promise<void> {
  const { opts } = ctx;
  let rate = opts['latency-rate'];
  if (!rate) {
    // The maximum is what the measured pipeline sustains: single triggers from this process while a worker runs
    // them, on the same machine (the two compete for its cores, so neither capacity alone is the pipeline's).
    const alone = await triggerCapacity(ctx, false);
    const pipeline = await triggerCapacity(ctx, true);
    rate = Math.round(pipeline * opts['latency-fraction']);
    c.add('single-trigger capacity, no worker running', 'triggers/s', alone, { info: true });
    c.add('pipeline capacity: triggers run to success, worker running', 'jobs/s', pipeline, { info: true });
    c.note(
      `rate = ${opts['latency-fraction']} x the pipeline's capacity (${Math.round(pipeline)} jobs/s: ${opts['latency-pool']} closed-loop ` +
        `callers of triggerJob in this process, one worker process at C=${opts.concurrency} running them, completions by the DB clock)`,
    );
  }
  c.add('offered trigger rate', 'triggers/s', rate, { info: true });
  // BullMQ at the same rate right after each of our runs, so that the machine's drift falls on both.
  for (let run = 0; run < runs; run++) {
    const ours = await once(c, ctx, rate, `run ${run + 1}`);
    const bull = await bullLatencyOnce(c, ctx, rate, `run ${run + 1}`);
    if (ours && bull)
      c.add('ours/BullMQ start p99 (paired runs)', 'ratio', ours.p99 / bull.p99, { target: { op: '<', value: 1 } });
  }
  c.note(
    "BullMQ: the same open-loop rate from the same number of senders (Queue.add), one worker process at the same concurrency, same Redis; add -> start = processedOn - timestamp (this host's clock, whole ms)",
  );
}

/**
 * Single triggers per second, closed-loop from this process with the generator's pool. With `withWorker`, a worker
 * process runs them meanwhile and the figure is completions per second (first queued_at to last finished_at).
 */
async function triggerCapacity(ctx: BenchContext, withWorker: boolean): Promise<number> {
  const { opts, progress } = ctx;
  const env = await benchEnv('bench_latency_cap');
  const worker = withWorker ? spawnWorker(env, { concurrency: opts.concurrency, logLevel: 'warn' }) : null;
  try {
    const jobId = await noopJob(env);
    if (worker) await waitRegistered(env, worker);
    const genPool = new pg.Pool({ connectionString: env.childEnv.DATABASE_URL, max: opts['latency-pool'] });
    genPool.on('error', () => undefined);
    const deps = { ...commandDeps(env), store: createStore(genPool) };
    try {
      for (let i = 0; i < 200; i++) await triggerJob(deps, { jobId });
      if (worker) await waitNoLive(env, worker);
      const { rows: warm } = await env.pool.query(`SELECT coalesce(max(id), 0)::text AS id FROM executions`);
      let sent = 0;
      const total = 8000;
      const t = performance.now();
      await Promise.all(
        Array.from({ length: opts['latency-pool'] }, async () => {
          while (sent++ < total) await triggerJob(deps, { jobId });
        }),
      );
      const triggered = total / ((performance.now() - t) / 1000);
      if (!worker) {
        progress(`latency: single-trigger capacity, no worker: ${Math.round(triggered)}/s`);
        return triggered;
      }
      const { stalled } = await waitNoLive(env, worker);
      if (stalled) throw new Error('latency calibration: the worker stalled');
      const { rows } = await env.pool.query(
        `SELECT count(*)::int AS n, extract(epoch FROM max(finished_at) - min(queued_at))::float8 AS s
         FROM executions WHERE id > $1 AND status = 'succeeded'`,
        [warm[0].id],
      );
      const pipeline = rows[0].n / rows[0].s;
      progress(`latency: pipeline capacity (triggers + worker): ${Math.round(pipeline)} jobs/s`);
      return pipeline;
    } finally {
      await genPool.end();
    }
  } finally {
    await worker?.stop();
    await env.cleanup();
  }
}

/**
 * One open-loop run. With `breakdown`, the worker runs with test/bench/lib/instrument.mjs (BENCH_MARKS=1) and each
 * execution's path is split into stages by wall-clock instants taken in both processes (same host clock):
 * queued_at (DB) -> trigger call returned (INSERT committed and id pushed, this process) -> claim reply in the
 * worker -> read of the claimed row returned in the worker -> started_at (DB).
 */
export async function latencyOnce(
  c: Collector,
  ctx: BenchContext,
  rate: number,
  subject: string,
  breakdown?: { dir: string },
): Promise<void> {
  await once(c, ctx, rate, subject, breakdown);
}

async function once(
  c: Collector,
  ctx: BenchContext,
  rate: number,
  subject: string,
  breakdown?: { dir: string },
): Promise<{ p50: number; p99: number }> {
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
        ? {
            nodeArgs: ['--import', join(ROOT, 'test/bench/lib/instrument.mjs')],
            extraEnv: { BENCH_INSTRUMENT_OUT: marksFile, BENCH_MARKS: '1' },
          }
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
      const fromIntended = measured
        .filter((r) => intended.has(r.id))
        .map((r) => Number(r.started) - intended.get(r.id)!);
      const ps = percentiles(toStart);
      const pi = percentiles(fromIntended);
      const pd = percentiles(toDone);
      const pl = percentiles(lag);
      if (breakdown && existsSync(marksFile)) {
        const marks = JSON.parse(readFileSync(marksFile, 'utf8')).marks as {
          claimed: Record<string, number>;
          loaded: Record<string, number>;
        };
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
        c.note(
          'breakdown instants: queued_at and started_at from PostgreSQL, the others from each process\'s wall clock (one host, one clock); a negative "returned -> claim" means the worker claimed the id before the trigger call got its push reply',
        );
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
        c.note(
          `${subject}: the load generator fell behind (trigger call lag p99 ${Math.round(pl.p99!)} ms): triggerJob from this process did not sustain ${rate}/s, so the offered load was lower and burstier than planned; "intended -> start" counts that wait, "trigger -> start" (DB clock, from queued_at) does not`,
        );
      }
      progress(
        `latency ${subject}: start p50 ${ps.p50!.toFixed(1)} p99 ${ps.p99!.toFixed(1)} ms; success p50 ${pd.p50!.toFixed(1)} p99 ${pd.p99!.toFixed(1)} ms`,
      );
      c.note(
        `the first ${opts['latency-warmup-seconds']} s of load are excluded; trigger call lag shows how late the trigger's INSERT ran against the timer (client pool queueing)`,
      );
      await verifyDrain(c, env.pool, env.queue, total + warmCount, subject);
      return { p50: ps.p50!, p99: ps.p99! };
    } finally {
      await worker.stop();
      await genPool.end();
    }
  } finally {
    await env.cleanup();
  }
}
