/**
 * @module minutes — the per-minute outcome counts (`execution_minutes`), kept by the statements that finish
 * executions, so throughput, success rate and 24-hour counts read at most 1,440 rows instead of the history.
 */
import type pg from 'pg';

/**
 * SQL for a CTE body that adds the rows of CTE `source` to the current minute, by `status` (an SQL expression over
 * `source`). Groups are written in a fixed order so concurrent writers lock the counter rows in the same order.
 */
export function countInMinutes(source: string, status: string, durationMs = '0'): string {
  return `INSERT INTO execution_minutes (minute, status, count, duration_ms)
       SELECT date_trunc('minute', now()), ${status}, count(*), coalesce(sum(${durationMs}), 0) FROM ${source}
       GROUP BY 2 ORDER BY 2
       ON CONFLICT (minute, status) DO UPDATE
         SET count = execution_minutes.count + excluded.count, duration_ms = execution_minutes.duration_ms + excluded.duration_ms`;
}

/** What one call of executionMinutesPrune took out of the roll-up, per status. */
export type PrunedMinutes = Record<string, { count: number; durationMs: number }>;

/**
 * Deletes up to `limit` roll-up rows older than their status's retention (failed and dead: `deadMs`, never less than
 * `historyMs`; the rest: `historyMs`; null keeps forever), oldest first, and returns what the deleted rows counted.
 * The one place roll-up rows are ever deleted: a counter that must never decrease (a monotonic total of finished
 * attempts) folds the returned counts in here, in the same statement, before they are gone.
 * @example const pruned = await executionMinutesPrune(pool, { historyMs: 30 * 86_400_000, deadMs: 90 * 86_400_000, limit: 1000 });
 */
export async function executionMinutesPrune(
  pool: pg.Pool,
  input: { historyMs: number | null; deadMs: number | null; limit: number },
): Promise<PrunedMinutes> {
  if (input.historyMs === null) return {};
  const deadMs = input.deadMs === null ? null : Math.max(input.deadMs, input.historyMs);
  // Walks the primary key (minute, status) from the oldest minute; every row it reads before the cut is deleted.
  const { rows } = await pool.query(
    `WITH doomed AS (
       SELECT minute, status FROM execution_minutes
       WHERE minute < now() - make_interval(secs => $1::bigint / 1000.0)
         AND (status NOT IN ('failed', 'dead')
              OR ($2::bigint IS NOT NULL AND minute < now() - make_interval(secs => $2::bigint / 1000.0)))
       ORDER BY minute LIMIT $3
       FOR UPDATE SKIP LOCKED
     ),
     gone AS (
       DELETE FROM execution_minutes m USING doomed d WHERE m.minute = d.minute AND m.status = d.status
       RETURNING m.status, m.count, m.duration_ms
     )
     SELECT status, sum(count)::bigint AS count, sum(duration_ms)::bigint AS duration_ms FROM gone GROUP BY status`,
    [input.historyMs, deadMs, input.limit],
  );
  const out: PrunedMinutes = {};
  for (const r of rows) out[r.status] = { count: Number(r.count), durationMs: Number(r.duration_ms) };
  return out;
}
