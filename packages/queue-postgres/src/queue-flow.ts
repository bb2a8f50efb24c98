/**
 * @module queue-flow — the flow-control side of the PostgreSQL queue: copying job limits and lane states from a
 * snapshot, freeing slots, and reading why attempts wait. Enforcement is in queue_claim (sql/queue_claim.sql).
 * Slots are the leased rows themselves and live in the same database as the store, so this queue never loses its
 * flow state on its own: `flowNeeds().restore` is always false and a full snapshot writes only limits and lanes.
 */
import type { FlowJobState, FlowSnapshot } from '@jobs/core';
import { transaction } from '@jobs/store';
import type pg from 'pg';

export function flowOperations(pool: pg.Pool, release: (ids: readonly string[]) => Promise<void>) {
  return {
    async flowNeeds(): Promise<{ restore: boolean; unknownJobs: string[] }> {
      const { rows } = await pool.query(
        `SELECT DISTINCT flow_job::text AS job FROM queue_items WHERE state = 'parked' AND parked_on = 'u' LIMIT 1000`,
      );
      return { restore: false, unknownJobs: rows.map((r) => r.job) };
    },

    /**
     * Writes lane states and job limits newer than the queue's copies. A job whose limits changed has its waiting
     * attempts checked again; attempts parked for unknown limits go back to be checked once their job is known.
     */
    async flowRestore(snapshot: FlowSnapshot): Promise<{ restored: boolean }> {
      // The store's transaction helper: a connection that dies mid-transaction (a restart) must not crash the process.
      await transaction(pool, async (client) => {
        await client.query('SELECT queue_flow_lock()');
        const lanes = snapshot.lanes;
        const resumed = await client.query(
          `WITH input AS (SELECT * FROM unnest($1::text[], $2::boolean[], $3::numeric[]) AS i(lane, paused, version)),
           before AS (SELECT l.lane, l.paused FROM queue_lanes l JOIN input i ON i.lane = l.lane),
           written AS (
             INSERT INTO queue_lanes AS l (lane, paused, version) SELECT lane, paused, version FROM input
             ON CONFLICT (lane) DO UPDATE SET paused = excluded.paused, version = excluded.version
             WHERE excluded.version >= l.version
             RETURNING l.lane, l.paused)
           SELECT w.lane FROM written w JOIN before b ON b.lane = w.lane WHERE b.paused AND NOT w.paused`,
          [lanes.map((l) => l.lane), lanes.map((l) => l.paused), lanes.map((l) => l.version)],
        );
        for (const row of resumed.rows) await client.query(`SELECT pg_notify(queue_channel('work'), $1)`, [row.lane]);
        const jobs = snapshot.jobs;
        const n = (v: number | null | undefined) => (v === null || v === undefined ? null : v);
        await client.query(
          `WITH input AS (
             SELECT * FROM unnest($1::bigint[], $2::int[], $3::int[], $4::int[], $5::int[], $6::boolean[], $7::numeric[])
               AS i(job_id, max_concurrency, max_per_key, rate_limit, period_ms, per_key, version)),
           before AS (
             SELECT j.job_id, j.max_concurrency, j.max_per_key, j.rate_limit, j.period_ms, j.per_key
             FROM queue_flow_jobs j JOIN input i ON i.job_id = j.job_id),
           written AS (
             INSERT INTO queue_flow_jobs AS j (job_id, max_concurrency, max_per_key, rate_limit, period_ms, per_key, version)
             SELECT * FROM input
             ON CONFLICT (job_id) DO UPDATE SET max_concurrency = excluded.max_concurrency, max_per_key = excluded.max_per_key,
               rate_limit = excluded.rate_limit, period_ms = excluded.period_ms, per_key = excluded.per_key, version = excluded.version
             WHERE excluded.version > j.version
             RETURNING j.job_id, j.max_concurrency, j.max_per_key, j.rate_limit, j.period_ms, j.per_key)
           -- Waiting attempts are checked again under changed limits (raised limits must not leave them waiting);
           -- the same limits again (the reconciler repeats recent changes) leave them parked.
           SELECT queue_wake(w.job_id, NULL, NULL, 2147483647) FROM written w LEFT JOIN before b ON b.job_id = w.job_id
           WHERE b.job_id IS NULL
              OR (b.max_concurrency, b.max_per_key, b.rate_limit, b.period_ms, b.per_key)
                 IS DISTINCT FROM (w.max_concurrency, w.max_per_key, w.rate_limit, w.period_ms, w.per_key)`,
          [
            jobs.map((j) => j.jobId),
            jobs.map((j) => n(j.limits?.maxConcurrency)),
            jobs.map((j) => n(j.limits?.maxConcurrencyPerKey)),
            jobs.map((j) => n(j.limits?.rateLimit?.limit)),
            jobs.map((j) => n(j.limits?.rateLimit?.periodMs)),
            jobs.map((j) => j.limits?.rateLimit?.perKey === true),
            jobs.map((j) => j.version),
          ],
        );
        await client.query(
          `SELECT queue_wake(u.flow_job, NULL, 'u', 2147483647)
           FROM (SELECT DISTINCT p.flow_job FROM queue_items p WHERE p.state = 'parked' AND p.parked_on = 'u') u
           WHERE EXISTS (SELECT 1 FROM queue_flow_jobs j WHERE j.job_id = u.flow_job)`,
        );
      });
      return { restored: false };
    },

    flowRelease: release,

    /** Why attempts of these jobs wait (none given: every job that has attempts waiting, at most 200). */
    async flowInspect(jobIds: readonly string[] = []): Promise<FlowJobState[]> {
      const { rows } = await pool.query(
        `WITH jobs AS (
           SELECT j AS job_id FROM unnest($1::bigint[]) AS j
           UNION ALL
           SELECT w.flow_job FROM (SELECT DISTINCT flow_job FROM queue_items
                                   WHERE state = 'parked' AND parked_on <> 'u' LIMIT 200) w WHERE cardinality($1::bigint[]) = 0)
         SELECT j.job_id::text AS job_id,
           (SELECT count(*) FROM queue_items s WHERE s.flow_job = j.job_id AND s.state = 'leased')::int AS running,
           (SELECT count(*) FROM queue_items s WHERE s.flow_job = j.job_id AND s.state = 'parked' AND s.parked_on = 'c')::int AS wc,
           (SELECT count(*) FROM queue_items s WHERE s.flow_job = j.job_id AND s.state = 'parked' AND s.parked_on = 'k')::int AS wk,
           (SELECT count(*) FROM queue_items s WHERE s.flow_job = j.job_id AND s.state = 'parked' AND s.parked_on = 'r')::int AS wr,
           (SELECT coalesce(json_agg(k ORDER BY k.waiting DESC), '[]') FROM (
              SELECT p.flow_key AS key, count(*)::int AS waiting,
                     (SELECT count(*) FROM queue_items s WHERE s.flow_job = j.job_id AND s.flow_key = p.flow_key AND s.state = 'leased')::int AS running
              FROM queue_items p WHERE p.flow_job = j.job_id AND p.state = 'parked' AND p.parked_on = 'k'
              GROUP BY p.flow_key ORDER BY count(*) DESC LIMIT 100) k) AS keys,
           f.rate_limit, f.per_key,
           (SELECT count(*) FROM queue_flow_starts s WHERE s.bucket = j.job_id::text
              AND s.started_at > clock_timestamp() - f.period_ms * interval '1 millisecond')::int AS in_window,
           (SELECT min(s.started_at) + f.period_ms * interval '1 millisecond' FROM queue_flow_starts s WHERE s.bucket = j.job_id::text
              AND s.started_at > clock_timestamp() - f.period_ms * interval '1 millisecond') AS next_start
         FROM jobs j LEFT JOIN queue_flow_jobs f ON f.job_id = j.job_id`,
        [jobIds],
      );
      return rows.map((r) => ({
        jobId: r.job_id,
        running: r.running,
        waiting: { maxConcurrency: r.wc, maxConcurrencyPerKey: r.wk, rateLimit: r.wr },
        keys: r.keys as FlowJobState['keys'],
        rate:
          r.rate_limit === null || r.per_key
            ? null
            : {
                inWindow: r.in_window,
                nextStartAt: r.in_window >= r.rate_limit ? (r.next_start as Date | null) : null,
              },
      }));
    },

    /** Attempts parked because their job's limits were unknown to the queue (a restore lets them go). */
    async flowUnknownCount(): Promise<number> {
      const { rows } = await pool.query(
        `SELECT count(*)::int AS n FROM queue_items WHERE state = 'parked' AND parked_on = 'u'`,
      );
      return rows[0].n;
    },
  };
}
