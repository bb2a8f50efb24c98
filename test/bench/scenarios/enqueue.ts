/**
 * enqueue: how fast work gets in.
 *   single: core triggerJob (INSERT + Redis push per call) one at a time, from a few concurrent callers;
 *   bulk:   store.executionsEnqueueMany + queue.push in batches, sequentially;
 *   http:   POST /api/v1/jobs/:id/trigger against createApp served in this process by @hono/node-server on an
 *           ephemeral port, from a worker thread running plain fetch (keep-alive) with ~32 requests in flight.
 * Verified: every call created exactly one queued row, and Redis holds every one of them exactly once.
 */
import { serve } from '@hono/node-server';
import { triggerJob } from '@jobs/core';
import pino from 'pino';
import { spawn, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker as Thread } from 'node:worker_threads';
import { createLogger, logSink } from '../../../functions/logger';
import type { TestEnv } from '../../support/env';
import { commandDeps, noopJob } from '../lib/ours';
import { benchEnv } from '../lib/envs';
import type { Collector } from '../lib/result';
import { percentiles } from '../lib/stats';
import type { BenchContext } from '../lib/options';

export async function enqueueScenario(c: Collector, ctx: BenchContext, runs: number): Promise<void> {
  const { opts, progress } = ctx;
  for (let run = 0; run < runs; run++) {
    const env = await benchEnv('bench_enqueue');
    try {
      // single
      const singleJob = await noopJob(env);
      const deps = commandDeps(env);
      // Warm-up (connections, JIT), not timed; its rows are counted in the checks.
      const warm = 200;
      for (let i = 0; i < warm; i++) await triggerJob(deps, { jobId: singleJob });
      let next = 0;
      const n = opts['single-n'];
      const lat: number[] = [];
      let t = performance.now();
      await Promise.all(
        Array.from({ length: opts['single-callers'] }, async () => {
          while (next < n) {
            next++;
            const t1 = performance.now();
            await triggerJob(deps, { jobId: singleJob });
            lat.push(performance.now() - t1);
          }
        }),
      );
      const singleRate = n / ((performance.now() - t) / 1000);
      c.add(`single triggerJob (${opts['single-callers']} callers)`, 'jobs/s', singleRate);
      c.add('single triggerJob call p50', 'ms', percentiles(lat).p50!, { info: true });
      c.add('single triggerJob call p99', 'ms', percentiles(lat).p99!, { info: true });
      progress(`enqueue single: ${Math.round(singleRate)} jobs/s`);

      // bulk
      const bulkJob = await noopJob(env);
      const bulkN = opts['bulk-n'];
      const batch = opts['bulk-batch'];
      let pgMs = 0;
      let redisMs = 0;
      t = performance.now();
      for (let i = 0; i < bulkN; i += batch) {
        const t1 = performance.now();
        const created = await env.store.executionsEnqueueMany({
          jobId: bulkJob,
          payloads: Array.from({ length: Math.min(batch, bulkN - i) }, () => null),
        });
        const t2 = performance.now();
        await env.queue.push(created);
        pgMs += t2 - t1;
        redisMs += performance.now() - t2;
      }
      const bulkRate = bulkN / ((performance.now() - t) / 1000);
      c.add('bulk: PostgreSQL share (executionsEnqueueMany)', '%', (pgMs / (pgMs + redisMs)) * 100, { info: true });
      c.add(`bulk: per batch of ${batch}, PostgreSQL`, 'ms', pgMs / Math.ceil(bulkN / batch), { info: true });
      c.add(`bulk: per batch of ${batch}, Redis push`, 'ms', redisMs / Math.ceil(bulkN / batch), { info: true });
      c.add(`bulk enqueueMany+push (batches of ${opts['bulk-batch']})`, 'jobs/s', bulkRate, {
        target: { op: '>=', value: 50_000 },
      });
      progress(`enqueue bulk: ${Math.round(bulkRate)} jobs/s`);

      // The same trigger at the HTTP concurrency, through the core and through the route without a socket: where the
      // HTTP path's time goes (core vs Hono route vs Node HTTP server + client).
      const layersJob = await noopJob(env);
      const conc = opts['http-concurrency'];
      const layerN = Math.max(500, Math.floor(opts['http-n'] / 2));
      const coreRate = await closedLoop(layerN, conc, () => triggerJob(deps, { jobId: layersJob }));
      c.add(`layers: core triggerJob (${conc} in flight)`, 'jobs/s', coreRate, { info: true });
      const { app } = await apiApp(env);
      const routeRate = await closedLoop(layerN, conc, async () => {
        const res = await app.request(`/api/v1/jobs/${layersJob}/trigger`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer bench-key' },
          body: '{}',
        });
        if (res.status !== 201) throw new Error(`status ${res.status}`);
        await res.text();
      });
      c.add(`layers: API route via app.request, no socket (${conc} in flight)`, 'req/s', routeRate, { info: true });

      // http
      const httpJob = await noopJob(env);
      const http = await httpTrigger(env, httpJob, opts['http-n'], opts['http-concurrency']);
      const client = 'client' in http ? 'wrk' : 'node:http client thread';
      c.add(`HTTP trigger (${opts['http-concurrency']} in flight, ${client})`, 'req/s', http.rate, {
        target: { op: '>=', value: 2_000 },
      });
      c.add('HTTP trigger p50', 'ms', http.p50, { info: true });
      c.add('HTTP trigger p99', 'ms', http.p99, { info: true });
      progress(`enqueue http: ${Math.round(http.rate)} req/s ${JSON.stringify(http.statuses)}`);
      c.check(
        'HTTP: every request answered 201 (distinct rows: checked in PostgreSQL below)',
        http.ok,
        JSON.stringify(http.statuses),
        `run ${run + 1}`,
      );

      await verifyEnqueued(
        c,
        env,
        { [singleJob]: n + warm, [bulkJob]: opts['bulk-n'], [layersJob]: 2 * layerN, [httpJob]: opts['http-n'] },
        `run ${run + 1}`,
      );
    } finally {
      await env.cleanup();
    }
  }
  c.note(
    'HTTP: the API logs one line per request and per created execution at LOG_LEVEL=info, to /dev/null here; one API key (bearer auth on)',
  );
  c.note(
    hasWrk()
      ? 'HTTP load comes from wrk (apt-get install wrk), sending exactly n triggers; the rate is n over the span of their insert times (DB clock); server and wrk share the machine'
      : 'HTTP load comes from a node:http client in a worker thread of this process (install wrk for a lighter client); server and client share the machine',
  );
}

async function closedLoop(n: number, concurrency: number, call: () => Promise<unknown>): Promise<number> {
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        await call();
      }
    }),
  );
  return n / ((performance.now() - t) / 1000);
}

/** createApp as the API process builds it: info-level logging (to /dev/null here), one API key. */
async function apiApp(env: TestEnv) {
  const { createApp } = await import('@jobs/api');
  const logger = createLogger({ level: 'info', destination: pino.destination({ dest: '/dev/null', sync: false }) });
  const token = 'bench-key';
  const app = createApp({
    store: env.store,
    queue: env.queue,
    clock: { now: () => new Date() },
    sink: logSink(logger),
    logger,
    apiKeys: [token],
    bodyLimitBytes: 256 * 1024,
    shortLaneMaxTimeoutMs: 600_000,
    workerActiveWithinMs: 60_000,
  });
  return { app, token };
}

export async function httpTrigger(env: TestEnv, jobId: string, n: number, concurrency: number) {
  const { app, token } = await apiApp(env);
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  try {
    const port = (server.address() as AddressInfo).port;
    const url = `http://127.0.0.1:${port}/api/v1/jobs/${jobId}/trigger`;
    if (hasWrk()) return await wrkTrigger({ url, n, concurrency, token, env, jobId });
    const thread = new Thread(new URL('../lib/http-client.mjs', import.meta.url), {
      workerData: { url, n, concurrency, token },
    });
    const result = await new Promise<{
      ms: number;
      statuses: Record<string, number>;
      ids: string[];
      latencies: number[];
    }>((resolve, reject) => {
      thread.once('message', resolve);
      thread.once('error', reject);
    });
    await thread.terminate();
    const p = percentiles(result.latencies);
    return {
      rate: n / (result.ms / 1000),
      p50: p.p50!,
      p99: p.p99!,
      statuses: result.statuses,
      ok: result.statuses['201'] === n && new Set(result.ids).size === n,
    };
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** wrk (a C load generator) takes far less of a 2-core machine than any Node client; used when installed. */
function hasWrk(): boolean {
  return spawnSync('sh', ['-c', 'command -v wrk'], { stdio: 'ignore' }).status === 0;
}

/**
 * Exactly `n` trigger POSTs through wrk: once n are sent, its connections send GET /healthz (which creates
 * nothing) until the n-th trigger answered, then it stops; its Lua `done` prints the counts as JSON.
 */
async function wrkTrigger(input: {
  url: string;
  n: number;
  concurrency: number;
  token: string;
  env: TestEnv;
  jobId: string;
}) {
  const target = new URL(input.url);
  const script = join(tmpdir(), `bench-wrk-${process.pid}.lua`);
  writeFileSync(
    script,
    `-- request/response run in the thread's Lua state, done() in the main one: counts travel through thread:get.
local threads = {}
function setup(thread) table.insert(threads, thread) end
-- Requests are formatted in init(): at load time wrk does not know the host yet (the request would lack Host).
-- sent starts at -1: wrk calls request() once after init() to check whether the request is static, without sending.
function init(args)
  sent = -1; created = 0; other = 0
  trigger = wrk.format("POST", "${target.pathname}", { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer ${input.token}" }, "{}")
  health = wrk.format("GET", "/healthz")
end
function request()
  if sent < ${input.n} then sent = sent + 1; return trigger end
  return health
end
function response(status, headers, body)
  if status == 201 then created = created + 1 elseif status ~= 200 then other = other + 1 end
  if created + other >= ${input.n} then wrk.thread:stop() end
end
function done(summary, latency, requests)
  local c, o = 0, 0
  for _, t in ipairs(threads) do c = c + t:get("created"); o = o + t:get("other") end
  io.write(string.format('WRK {"created":%d,"other":%d,"ms":%f,"p50":%f,"p99":%f}\\n', c, o,
    summary.duration / 1000, latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
`,
  );
  try {
    // Asynchronously: the server under test runs in this process's event loop.
    const child = spawn('wrk', ['-t1', `-c${input.concurrency}`, '-d120s', '-s', script, `${target.origin}/`]);
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stdout += d.toString()));
    const closed = new Promise((resolve) => child.on('close', resolve));
    // wrk keeps its threads alive until -d ends even after they stop sending: once PostgreSQL holds all n rows,
    // interrupt it (it then prints its report and runs done()). The rate comes from the rows' own insert times.
    let span: { n: number; ms: number } = { n: 0, ms: 0 };
    for (const deadline = Date.now() + 120_000; Date.now() < deadline;) {
      const { rows } = await input.env.pool.query(
        `SELECT count(*)::int AS n, extract(epoch FROM max(queued_at) - min(queued_at)) * 1000 AS ms FROM executions WHERE job_id = $1`,
        [input.jobId],
      );
      span = { n: rows[0].n, ms: Number(rows[0].ms ?? 0) };
      if (span.n >= input.n) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 200)); // the last responses reach wrk
    child.kill('SIGINT');
    await closed;
    const line = stdout.split('\n').find((l) => l.startsWith('WRK '));
    if (!line) throw new Error(`wrk gave no result: ${stdout}`);
    const r = JSON.parse(line.slice(4)) as { created: number; other: number; ms: number; p50: number; p99: number };
    return {
      rate: input.n / (span.ms / 1000),
      p50: r.p50,
      p99: r.p99,
      statuses: { 201: r.created, other: r.other },
      ok: r.created === input.n,
      client: 'wrk',
    };
  } finally {
    rmSync(script, { force: true });
  }
}

/** Each job has exactly the expected queued rows, and Redis holds each id once in the ready set. */
async function verifyEnqueued(
  c: Collector,
  env: TestEnv,
  expected: Record<string, number>,
  subject: string,
): Promise<void> {
  const { rows } = await env.pool.query(
    `SELECT job_id, count(*)::int AS n, count(*) FILTER (WHERE status = 'queued')::int AS queued FROM executions GROUP BY job_id`,
  );
  const got = Object.fromEntries(rows.map((r) => [String(r.job_id), r]));
  const total = Object.values(expected).reduce((a, b) => a + b, 0);
  const pgOk =
    Object.entries(expected).every(([job, n]) => got[job]?.n === n && got[job]?.queued === n) &&
    rows.length === Object.keys(expected).length;
  c.check(
    'PostgreSQL: one queued row per enqueue call, nothing more',
    pgOk,
    `expected ${JSON.stringify(expected)}, got ${JSON.stringify(rows)}`,
    subject,
  );
  const lane = env.redisQueue!.keys.lane('short');
  const ready = await env.redis.zcard(lane.ready);
  const delayed = await env.redis.zcard(lane.delayed);
  // Every PostgreSQL id is in the ready set (sampled in pages), and the set holds nothing else.
  const ids = await env.pool.query(`SELECT array_agg(id::text) AS ids FROM executions`);
  const all: string[] = ids.rows[0].ids ?? [];
  let missing = 0;
  for (let i = 0; i < all.length; i += 5000) {
    const scores = await env.redis.zmscore(lane.ready, ...all.slice(i, i + 5000));
    missing += scores.filter((s) => s === null).length;
  }
  c.check(
    'Redis: every row pushed exactly once (ready set == the rows)',
    ready === total && delayed === 0 && missing === 0,
    `ready=${ready} delayed=${delayed} missing=${missing} expected=${total}`,
    subject,
  );
}
