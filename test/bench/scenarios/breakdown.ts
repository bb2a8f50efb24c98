/**
 * breakdown (diagnostic, only with --only=breakdown): where a drained job's cost goes, per job and per 1,000 jobs.
 * One worker process drains `n` queued no-op jobs (LOG_LEVEL=warn, `--queue` picks the queue) with
 * test/bench/lib/instrument.mjs preloaded in counting mode (no V8 profile), and over the drain window it reads:
 *   - the worker's CPU (/proc of its pid);
 *   - the CPU of the PostgreSQL backends serving it, and only those: the worker connects with its own
 *     application_name, and each backend's /proc/<pid>/stat is sampled while the drain runs;
 *   - every postgres process on the machine, and Redis's own INFO cpu (both shared with whatever else runs);
 *   - the statements and Redis commands the worker sent, and its round trips (a pipeline is one);
 *   - the WAL its work wrote and the commits it made, from pg_walinspect over the window's WAL: the records that
 *     touch a relation of the run's schema, plus every record (commits included) of a transaction that did.
 *     The server's WAL is shared, so pg_current_wal_lsn alone would count everybody's writes.
 */
import pg from 'pg';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { readFileSync, rmSync } from 'node:fs';
import { DATABASE_URL, uniqueName } from '../../support/env';
import { benchEnv } from '../lib/envs';
import { dbWindow, enqueueBulk, noopJob, spawnWorker, waitNoLive, waitRegistered } from '../lib/ours';
import { ROOT, procCpuSeconds, sampler } from '../lib/proc';
import type { Collector } from '../lib/result';
import { sleep } from '../lib/stats';
import { verifyDrain } from '../lib/verify';
import type { BenchContext } from '../lib/options';

interface Counted {
  n: number;
  ms: number;
}
interface Timings {
  pg: Record<string, Counted>;
  redis: Record<string, Counted>;
  redisRoundTrips: number;
}

export async function breakdownScenario(c: Collector, ctx: BenchContext, runs: number): Promise<void> {
  for (let i = 0; i < runs; i++) {
    ctx.progress(`breakdown run ${i + 1}/${runs} (${ctx.opts.queue} queue)`);
    await breakdownOnce(c, ctx);
  }
  c.note(
    'per 1k jobs: CPU ms over the drain window divided by N; worker backends = the PostgreSQL backends with the worker\'s application_name; "all postgres" and Redis are machine- and server-wide (noisy when others run)',
  );
  c.note(
    'WAL and commits: pg_walinspect records of the window touching the run schema, plus all records of transactions that did (the server is shared)',
  );
}

async function breakdownOnce(c: Collector, ctx: BenchContext): Promise<void> {
  const { opts, progress } = ctx;
  const n = opts.n;
  const env = await benchEnv('bench_breakdown', opts.queue);
  const wal = await walInspector();
  const out = join(tmpdir(), `${env.schema}-timings.json`);
  try {
    const jobId = await noopJob(env);
    await enqueueBulk(env, jobId, n, 5000);
    const appName = env.schema.slice(0, 60);
    const url = new URL(env.childEnv.DATABASE_URL!);
    url.searchParams.set('application_name', appName);
    const worker = spawnWorker(env, {
      concurrency: opts.concurrency,
      logLevel: 'warn',
      nodeArgs: ['--import', join(ROOT, 'test/bench/lib/instrument.mjs')],
      extraEnv: { DATABASE_URL: url.toString(), BENCH_INSTRUMENT_OUT: out, BENCH_INSTRUMENT_PROFILE: '0' },
    });
    const s = sampler(worker.pid);
    const backends = backendCpu(env.pool, appName);
    let lsn0 = '';
    let lsn1 = '';
    let redis0 = 0;
    let redis1 = 0;
    try {
      await waitRegistered(env, worker);
      worker.child.kill('SIGUSR2');
      await backends.start();
      lsn0 = await currentLsn(env.pool);
      redis0 = await redisCpu(env);
      s.rebase();
      const { stalled } = await waitNoLive(env, worker, 60_000, 20);
      s.end();
      redis1 = await redisCpu(env);
      lsn1 = await currentLsn(env.pool);
      await backends.stop();
      worker.child.kill('SIGUSR2');
      const deadline = Date.now() + 30_000;
      while (!worker.output().includes('instrument: written') && Date.now() < deadline) await sleep(20);
      if (stalled) c.check('drain finished', false, worker.output().slice(-2000), 'breakdown');
    } finally {
      s.end();
      await backends.stop();
      await worker.stop();
    }
    const stats = s.end();
    const w = await dbWindow(env);
    await verifyDrain(c, env.pool, env.queue, n, 'breakdown');
    const perK = (seconds: number) => (seconds / n) * 1e6;
    c.add('jobs/s', 'jobs/s', n / w.seconds, { info: true });
    c.add('CPU per 1k jobs: worker', 'ms', perK(stats.processCpuS), { info: true });
    c.add('CPU per 1k jobs: its PostgreSQL backends', 'ms', perK(backends.seconds()), { info: true });
    c.add('CPU per 1k jobs: all postgres processes (machine-wide)', 'ms', perK(stats.postgresCpuS), { info: true });
    c.add('CPU per 1k jobs: Redis (INFO cpu, server-wide)', 'ms', perK(redis1 - redis0), { info: true });
    c.add('machine busy', '% of all cores', stats.machineBusyPct, { info: true });

    const timings = JSON.parse(readFileSync(out, 'utf8')) as Timings;
    const statements = Object.values(timings.pg).reduce((a, v) => a + v.n, 0);
    const commands = Object.values(timings.redis).reduce((a, v) => a + v.n, 0);
    c.add('per job: PostgreSQL statements (round trips)', 'count', statements / n, { info: true });
    c.add('per job: Redis commands', 'count', commands / n, { info: true });
    c.add('per job: Redis round trips', 'count', timings.redisRoundTrips / n, { info: true });
    // Which statements and commands: those sent at least once per 1,000 jobs (startup and heartbeats are not).
    for (const [table, label] of [
      ['pg', 'PostgreSQL'],
      ['redis', 'Redis'],
    ] as const)
      for (const [key, v] of Object.entries(timings[table]).sort((a, b) => b[1].n - a[1].n))
        if (v.n * 1000 >= n)
          c.add(`per 1k jobs, ${label}: ${key.slice(0, 60)}`, 'calls', (v.n / n) * 1000, { info: true });

    await sleep(200); // the window's last records flushed
    const w2 = await wal.ours(env.schema, lsn0, lsn1);
    c.add('per job: WAL bytes', 'bytes', w2.bytes / n, { info: true });
    c.add('per job: WAL full-page images', 'bytes', w2.fpi / n, { info: true });
    c.add('per job: WAL records', 'count', w2.records / n, { info: true });
    c.add('per job: commits', 'count', w2.commits / n, { info: true });
    c.add('per job: WAL of the whole server in the window', 'bytes', w2.allBytes / n, { info: true });
    c.add('on disk per execution (table, TOAST, indexes)', 'bytes', await bytesPerExecution(env.pool), {
      info: true,
    });
    progress(
      `breakdown: ${Math.round(n / w.seconds)} jobs/s, worker ${perK(stats.processCpuS).toFixed(0)} ms/1k, backends ${perK(backends.seconds()).toFixed(0)} ms/1k, ${(statements / n).toFixed(2)} statements/job, ${(w2.bytes / n).toFixed(0)} WAL bytes/job, ${(w2.commits / n).toFixed(3)} commits/job`,
    );
  } finally {
    rmSync(out, { force: true });
    await wal.close();
    await env.cleanup();
  }
}

/** Sums the CPU of the backends that carry `appName`, polled while the drain runs (new ones counted from zero). */
function backendCpu(pool: pg.Pool, appName: string) {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  let running = false;
  let started = false;
  let loop: Promise<void> = Promise.resolve();
  const poll = async () => {
    const { rows } = await pool.query(`SELECT pid FROM pg_stat_activity WHERE application_name = $1`, [appName]);
    for (const { pid } of rows as { pid: number }[]) {
      const cpu = procCpuSeconds(pid);
      if (cpu === null) continue;
      // A backend first seen after the start was born in the window: all its CPU is the drain's.
      if (!first.has(pid)) first.set(pid, started ? 0 : cpu);
      last.set(pid, cpu);
    }
  };
  return {
    async start() {
      await poll();
      started = true;
      running = true;
      loop = (async () => {
        while (running) {
          await sleep(100);
          await poll();
        }
      })();
    },
    async stop() {
      if (!running) return;
      running = false;
      await loop;
      await poll();
    },
    seconds() {
      let total = 0;
      for (const [pid, cpu] of last) total += cpu - (first.get(pid) ?? cpu);
      return total;
    },
  };
}

async function currentLsn(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query(`SELECT pg_current_wal_lsn()::text AS lsn`);
  return rows[0].lsn;
}

async function redisCpu(env: { redis: { info(section: string): Promise<string> } }): Promise<number> {
  const info = await env.redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return field('used_cpu_sys') + field('used_cpu_user');
}

async function bytesPerExecution(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query(
    `SELECT pg_total_relation_size('executions')::float8 / greatest(1, (SELECT count(*) FROM executions)) AS b`,
  );
  return rows[0].b;
}

/**
 * pg_walinspect in a database of its own (created and dropped here), so that the extension is not installed into
 * a database others use.
 */
async function walInspector() {
  const name = uniqueName('bench_wal').toLowerCase();
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  await client.query('CREATE EXTENSION pg_walinspect');
  return {
    async ours(schema: string, from: string, to: string) {
      const rels = await admin.query(
        `SELECT array_agg(DISTINCT f)::text AS rels, (SELECT oid FROM pg_database WHERE datname = current_database())::text AS db
         FROM (SELECT c.relfilenode AS f FROM pg_class c WHERE c.relnamespace = $1::regnamespace
               UNION ALL SELECT t.relfilenode FROM pg_class c JOIN pg_class t ON t.oid = c.reltoastrelid
                 WHERE c.relnamespace = $1::regnamespace
               UNION ALL SELECT i.relfilenode FROM pg_class c JOIN pg_index x ON x.indrelid = c.reltoastrelid
                 JOIN pg_class i ON i.oid = x.indexrelid WHERE c.relnamespace = $1::regnamespace) r
         WHERE f <> 0`,
        [schema],
      );
      const { rows } = await client.query(
        `WITH r AS (
           SELECT xid::text::bigint AS xid, resource_manager, record_type, record_length, fpi_length,
                  EXISTS (SELECT 1 FROM regexp_matches(coalesce(block_ref, ''), 'rel \\d+/' || $3 || '/(\\d+)', 'g') m
                          WHERE m[1]::oid = ANY($4::oid[])) AS touches
           FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)),
         x AS (SELECT DISTINCT xid FROM r WHERE touches AND xid <> 0),
         mine AS (SELECT r.*, r.touches OR x.xid IS NOT NULL AS ours FROM r LEFT JOIN x ON x.xid = r.xid AND r.xid <> 0)
         SELECT coalesce(sum(record_length) FILTER (WHERE ours), 0)::float8 AS bytes,
                coalesce(sum(fpi_length) FILTER (WHERE ours), 0)::float8 AS fpi,
                count(*) FILTER (WHERE ours)::int AS records,
                count(*) FILTER (WHERE ours AND resource_manager = 'Transaction' AND record_type LIKE 'COMMIT%')::int AS commits,
                coalesce(sum(record_length), 0)::float8 AS all_bytes
         FROM mine`,
        [from, to, rels.rows[0].db, rels.rows[0].rels],
      );
      const r = rows[0];
      return { bytes: r.bytes, fpi: r.fpi, records: r.records, commits: r.commits, allBytes: r.all_bytes };
    },
    async close() {
      await client.end().catch(() => undefined);
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      await admin.end();
    },
  };
}
