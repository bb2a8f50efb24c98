/**
 * `npm run bench`: the engine's benchmarks on the local PostgreSQL and Redis. Every scenario runs in its own
 * schema and Redis prefix (createTestEnv), verifies in PostgreSQL that every job completed exactly once (a run that
 * loses or duplicates one is a FAIL whatever its speed), and cleans up.
 *
 *   node --import tsx test/bench/run.ts [--json] [--only=drain,peer] [--runs=3] [--n=20000] ...   (--help for all)
 */
import { machineInfo, type Machine } from './lib/machine';
import { parseOptions, type BenchContext, type Options, type ScenarioName } from './lib/options';
import { Collector, toJson, toTable, type ScenarioResult } from './lib/result';
import { median } from './lib/stats';
import { breakdownScenario } from './scenarios/breakdown';
import { bullDrainOnce, oursDrainOnce } from './scenarios/drain';
import { bullPostgresDrainOnce } from './scenarios/drain-bullmq-postgres';
import { enqueueScenario } from './scenarios/enqueue';
import { httpScenario } from './scenarios/http';
import { latencyScenario } from './scenarios/latency';
import { historyScenario } from './scenarios/history';
import { metricsScenario } from './scenarios/metrics';
import { profileScenario } from './scenarios/profile';
import { scheduleScenario } from './scenarios/schedule';
import { tickScenario } from './scenarios/tick';

const WARN = 'ours, LOG_LEVEL=warn';
const INFO = 'ours, LOG_LEVEL=info >/dev/null';
const LIMITED = 'ours, half of the jobs under a per-key limit';

async function main() {
  let opts: Options;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
  const progress = (msg: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
  const machine = await machineInfo();
  if (machine.synchronousCommit !== 'on') {
    process.stderr.write(
      `PostgreSQL has synchronous_commit=${machine.synchronousCommit}: the benchmarks need it on (durable commits are part of the product)\n`,
    );
    process.exit(2);
  }
  const ctx: BenchContext = { opts, progress, drainRates: [] };
  const emit = (r: ScenarioResult) => {
    process.stdout.write(opts.json ? `${toJson(r, machine)}\n` : `\n${toTable(r)}\n`);
  };
  if (!opts.json) process.stdout.write(header(machine));

  const selected = new Set<ScenarioName>(opts.only);
  const results: ScenarioResult[] = [];
  const guard = async (
    name: string,
    runs: number,
    params: Record<string, unknown>,
    body: (c: Collector) => Promise<void>,
  ) => {
    const c = new Collector();
    try {
      await body(c);
    } catch (error) {
      c.check('scenario completed', false, error instanceof Error ? (error.stack ?? error.message) : String(error));
    }
    const r = c.result(name, runs, params);
    results.push(r);
    emit(r);
  };

  // drain and peer run interleaved (ours, BullMQ, ours, BullMQ, ...) so that noise on a shared machine hits both.
  if (selected.has('drain') || selected.has('peer')) {
    const runs = opts.runs ?? 3;
    const peerOnPostgres = (opts.peer ?? opts.queue) === 'postgres';
    const drain = new Collector();
    const peer = new Collector();
    const failures: string[] = [];
    for (let i = 0; i < runs; i++) {
      try {
        progress(`drain/peer run ${i + 1}/${runs}`);
        const ours = await oursDrainOnce(selected.has('drain') ? drain : peer, {
          n: opts.n,
          concurrency: opts.concurrency,
          logLevel: 'warn',
          label: WARN,
          record: { cpu: true },
          queue: opts.queue,
          progress,
        });
        ctx.drainRates.push(ours.jobsPerSec);
        if (selected.has('drain') && opts.unnamedStatements) {
          const unnamed = await oursDrainOnce(drain, {
            n: opts.n,
            concurrency: opts.concurrency,
            logLevel: 'warn',
            label: `${WARN}, unnamed statements`,
            record: { cpu: true },
            extraEnv: { DATABASE_PREPARED_STATEMENTS: 'unnamed' },
            progress,
          });
          drain.add('unnamed/named statements (paired runs)', 'ratio', unnamed.jobsPerSec / ours.jobsPerSec);
        }
        if (selected.has('peer')) {
          const peerOptions = { n: opts.n, concurrency: opts.concurrency, label: 'BullMQ', progress };
          const bull = peerOnPostgres
            ? await bullPostgresDrainOnce(peer, peerOptions)
            : await bullDrainOnce(peer, peerOptions);
          peer.add('ours/BullMQ (paired runs)', 'ratio', ours.jobsPerSec / bull.jobsPerSec);
          if (!selected.has('drain'))
            peer.note('ours = functions/worker-process.ts, LOG_LEVEL=warn, same N and concurrency');
        }
        if (selected.has('drain') && opts['limited-share'] > 0) {
          const limited = await oursDrainOnce(drain, {
            n: opts.n,
            concurrency: opts.concurrency,
            logLevel: 'warn',
            label: LIMITED,
            record: { cpu: true },
            limited: { share: opts['limited-share'], keys: opts['limited-keys'], perKey: opts['limited-per-key'] },
            queue: opts.queue,
            progress,
          });
          drain.add('limited/unlimited (paired runs)', 'ratio', limited.jobsPerSec / ours.jobsPerSec, {
            target: { op: '>=', value: 0.9 },
          });
        }
        if (selected.has('drain') && opts.infoLog) {
          await oursDrainOnce(drain, {
            n: opts.n,
            concurrency: opts.concurrency,
            logLevel: 'info',
            label: INFO,
            record: { cpu: true },
            queue: opts.queue,
            progress,
          });
        }
      } catch (error) {
        failures.push(error instanceof Error ? (error.stack ?? error.message) : String(error));
        break;
      }
    }
    const params = {
      n: opts.n,
      concurrency: opts.concurrency,
      worker: 'functions/worker-process.ts (1 process)',
      queue: opts.queue,
      peer: peerOnPostgres ? 'BullMQ on PostgreSQL' : 'BullMQ on Redis',
    };
    if (selected.has('drain')) {
      for (const f of failures) drain.check('scenario completed', false, f);
      drain.note(
        'rate = N / (max(finished_at) - min(started_at)) by the PostgreSQL clock; CPU figures are over the drain window and include everything else running on the machine for postgres/redis',
      );
      const r = drain.result('drain', runs, params);
      results.push(r);
      emit(r);
    }
    if (selected.has('peer')) {
      for (const f of failures) peer.check('scenario completed', false, f);
      const ours = median(ctx.drainRates);
      const bull = median(peer.metrics.get('BullMQ: jobs/s')?.values ?? []);
      // On PostgreSQL both sides commit every transition: the target is 3x BullMQ's own PostgreSQL backend. Our
      // PostgreSQL queue against BullMQ on Redis: a durable queue on one database as fast as the in-memory peer.
      const target = peerOnPostgres ? 3 : opts.queue === 'postgres' ? 1 : null;
      peer.add('ours/BullMQ (medians)', 'ratio', ours / bull, target ? { target: { op: '>=', value: target } } : {});
      if (peerOnPostgres) {
        peer.note(
          `BullMQ 6 on its PostgreSQL backend (createPostgresBackend): one worker process, no-op processor, default job options, same PostgreSQL server, own schema; ours on the ${opts.queue} queue (QUEUE_BACKEND=${opts.queue}); rate = N / (max(finished_at_ms) - min(processed_at_ms))`,
        );
        peer.note(
          'like for like: both commit every transition to the same PostgreSQL server, so every attempt is durable in both',
        );
      } else {
        peer.note(
          'BullMQ: one worker process, no-op processor, default job options (completed jobs kept), same Redis, own prefix; rate = N / (max(finishedOn) - min(processedOn))',
        );
        peer.note(
          'not like for like: our every transition is a durable PostgreSQL commit (synchronous_commit=on); BullMQ writes only to Redis (here with no persistence)',
        );
      }
      const r = peer.result('peer', runs, params);
      results.push(r);
      emit(r);
    }
  }

  if (selected.has('memory')) {
    const runs = opts.runs ?? 1;
    await guard('memory', runs, { n: opts.n, concurrency: opts['mem-concurrency'] }, async (c) => {
      for (let i = 0; i < runs; i++) {
        await oursDrainOnce(c, {
          n: opts.n,
          concurrency: opts['mem-concurrency'],
          logLevel: 'warn',
          label: `worker C=${opts['mem-concurrency']}`,
          record: { memory: true },
          progress,
        });
      }
      c.note(
        "VmHWM is the kernel's peak resident set of the worker process (read before SIGTERM); VmRSS sampled every 100 ms",
      );
    });
  }

  if (selected.has('enqueue')) {
    const runs = opts.runs ?? 3;
    await guard('enqueue', runs, enqueueParams(opts), (c) => enqueueScenario(c, ctx, runs));
  }
  if (selected.has('latency')) {
    const runs = opts.runs ?? 1;
    await guard('latency', runs, { seconds: opts['latency-seconds'], concurrency: opts.concurrency }, (c) =>
      latencyScenario(c, ctx, runs),
    );
  }
  if (selected.has('schedule')) {
    const runs = opts.runs ?? 1;
    await guard(
      'schedule',
      runs,
      {
        jobs: opts['schedule-jobs'],
        cron: '* * * * * *',
        seconds: opts['schedule-seconds'],
        SCHEDULE_INTERVAL: '60s',
        LOOKAHEAD: '70s',
      },
      (c) => scheduleScenario(c, ctx, runs),
    );
  }
  if (selected.has('history')) {
    await guard('history', 1, { n: opts['history-n'], jobs: 1000, drain: opts['history-drain'] }, (c) =>
      historyScenario(c, ctx),
    );
  }
  if (selected.has('tick')) {
    const runs = opts.runs ?? 3;
    await guard('tick', runs, { jobs: opts['tick-jobs'], due: opts['tick-due'] }, (c) => tickScenario(c, ctx, runs));
  }
  if (selected.has('http')) {
    const runs = opts.runs ?? 1;
    await guard(
      'http',
      runs,
      {
        n: opts.n,
        concurrency: opts.concurrency,
        worker: 'functions/worker-process.ts (1 process)',
        receiver: 'test/bench/http-receiver.ts (1 process)',
      },
      (c) =>
        httpScenario(c, {
          n: opts.n,
          concurrency: opts.concurrency,
          runs,
          profile: opts['http-profile'] === 1,
          progress,
        }),
    );
  }
  if (selected.has('metrics')) {
    const runs = opts.runs ?? 3;
    await guard(
      'metrics',
      runs,
      {
        executions: opts['metrics-executions'],
        live: opts['metrics-live'],
        scrapes: opts['metrics-scrapes'],
        drain: opts['metrics-drain'],
      },
      (c) => metricsScenario(c, ctx, runs),
    );
  }
  if (selected.has('breakdown')) {
    const runs = opts.runs ?? 1;
    await guard('breakdown', runs, { n: opts.n, concurrency: opts.concurrency, queue: opts.queue }, (c) =>
      breakdownScenario(c, ctx, runs),
    );
  }
  if (selected.has('profile')) {
    await guard('profile', 1, { n: opts['profile-n'], concurrency: opts.concurrency }, (c) => profileScenario(c, ctx));
  }

  const failed = results.filter((r) => !r.ok).map((r) => r.scenario);
  if (!opts.json)
    process.stdout.write(
      `\n${failed.length ? `FAIL: ${failed.join(', ')}` : `all ${results.length} scenario(s) verified`}\n`,
    );
  process.exit(failed.length ? 1 : 0);
}

function enqueueParams(opts: Options) {
  return {
    single: opts['single-n'],
    callers: opts['single-callers'],
    bulk: opts['bulk-n'],
    batch: opts['bulk-batch'],
    http: opts['http-n'],
    httpConcurrency: opts['http-concurrency'],
  };
}

function header(m: Machine): string {
  return [
    `machine: ${m.nproc} x ${m.cpu}, ${m.ramGb} GB RAM, load ${m.loadavg}`,
    `node ${m.node}; PostgreSQL ${m.postgres} (synchronous_commit=${m.synchronousCommit}); Redis ${m.redis} (${m.redisPersistence})`,
    '',
  ].join('\n');
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
