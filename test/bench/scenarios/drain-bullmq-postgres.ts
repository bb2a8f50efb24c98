/**
 * peer on PostgreSQL (`--queue=postgres`): BullMQ 6 on its own PostgreSQL backend (`createPostgresBackend`), in a
 * schema of its own on the same server as ours, drained by one BullMQ worker process. Both sides commit every
 * transition to PostgreSQL (synchronous_commit as the server has it), so every attempt is durable in both.
 * The rate is N / (max(finished_at_ms) - min(processed_at_ms)) over BullMQ's job table.
 */
import { createPostgresBackend, withBackend } from 'bullmq';
import pg from 'pg';
import { DATABASE_URL, uniqueName } from '../../support/env';
import { sampler, spawnNode, waitPeerDrain } from '../lib/proc';
import type { Collector } from '../lib/result';
import type { BullDrainOptions, DrainOutcome } from './drain';

export async function bullPostgresDrainOnce(c: Collector, o: BullDrainOptions): Promise<DrainOutcome> {
  const name = uniqueName('bench_bullpg');
  const schema = name.toLowerCase();
  const { Queue } = withBackend(createPostgresBackend);
  const queue = new Queue(name, { connection: { connectionString: DATABASE_URL, schema, migrate: true } });
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  try {
    const t = performance.now();
    for (let i = 0; i < o.n; i += 1000) {
      await queue.addBulk(
        Array.from({ length: Math.min(1000, o.n - i) }, (_, k) => ({ name: 'noop', data: { i: i + k } })),
      );
    }
    o.progress(
      `${o.label}: ${o.n} added in ${Math.round(performance.now() - t)} ms; starting BullMQ worker on PostgreSQL (C=${o.concurrency})`,
    );
    const worker = spawnNode(
      'test/bench/bullmq-worker.ts',
      {
        DATABASE_URL,
        BULL_BACKEND: 'postgres',
        BULL_SCHEMA: schema,
        BULL_QUEUE: name,
        BULL_CONCURRENCY: String(o.concurrency),
      },
      { stdout: 'pipe' },
    );
    const s = sampler(worker.pid);
    let stats: ReturnType<typeof s.end> | null = null;
    const counts = async () => {
      const { rows } = await pool.query(
        `SELECT count(*) FILTER (WHERE state = 'completed')::int AS completed, count(*) FILTER (WHERE state = 'failed')::int AS failed,
                count(*) FILTER (WHERE state NOT IN ('completed', 'failed'))::int AS left,
                count(*) FILTER (WHERE attempts_started > 1)::int AS started_twice,
                min(processed_at_ms)::float8 AS first, max(finished_at_ms)::float8 AS last
         FROM ${pg.escapeIdentifier(schema)}.job WHERE queue = $1`,
        [name],
      );
      return rows[0] as {
        completed: number;
        failed: number;
        left: number;
        started_twice: number;
        first: number;
        last: number;
      };
    };
    try {
      await waitPeerDrain(c, worker, {
        n: o.n,
        label: o.label,
        started: () => s.rebase(),
        done: async () => {
          const now = await counts();
          return now.completed + now.failed;
        },
      });
      stats = s.end();
    } finally {
      s.end();
      await worker.stop();
    }
    const final = await counts();
    const ok = final.completed === o.n && final.failed === 0 && final.left === 0 && final.started_twice === 0;
    c.check(
      'BullMQ on PostgreSQL: every job completed exactly once (completed == N, none failed, none started twice, none left)',
      ok,
      JSON.stringify(final),
      o.label,
    );
    const seconds = (final.last - final.first) / 1000;
    const jobsPerSec = o.n / seconds;
    c.add(`${o.label}: jobs/s`, 'jobs/s', jobsPerSec);
    if (stats) {
      c.add(`${o.label}: worker CPU`, '% of 1 core', (stats.processCpuS / stats.wallS) * 100, { info: true });
      c.add(`${o.label}: postgres CPU (all backends)`, '% of 1 core', (stats.postgresCpuS / stats.wallS) * 100, {
        info: true,
      });
    }
    o.progress(
      `${o.label}: ${Math.round(jobsPerSec)} jobs/s (${seconds.toFixed(2)} s from job timestamps)${ok ? '' : ' FAIL'}`,
    );
    return { jobsPerSec, ok, cpu: stats };
  } finally {
    await queue.close().catch(() => undefined);
    await pool.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`).catch(() => undefined);
    await pool.end();
  }
}
