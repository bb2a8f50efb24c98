/**
 * @module minutes — the per-minute outcome counts (`execution_minutes`), kept by the statements that finish
 * executions, so throughput, success rate, 24-hour counts and the Prometheus counters and histograms read at most
 * a few thousand rows instead of the history.
 */
import type pg from 'pg';

/**
 * Upper bounds (ms) of the attempt-duration histogram buckets. Part of the schema: the rows store one cumulative
 * count per bound plus the total, so changing these needs a migration that rewrites `duration_le`.
 */
export const DURATION_BOUNDS_MS = [
  5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 900000, 3600000,
] as const;
/** Upper bounds (ms) of the schedule-lateness buckets (start minus scheduled time of cron and one-off runs). */
export const LATENESS_BOUNDS_MS = [10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000] as const;

/**
 * 1-based index of the first bound at or above `value` (bounds.length + 1 above them all; null for null): one binary
 * search per row. width_bucket counts thresholds at or below its operand, so it runs on the negated value and bounds.
 */
function bucketIndex(value: string, bounds: readonly number[]): string {
  const negated = [...bounds].reverse().map((b) => -b);
  return `${bounds.length + 1} - width_bucket(-(${value})::float8, ARRAY[${negated.join(', ')}]::float8[])`;
}

/**
 * The cumulative bucket counts `ARRAY[count of v <= b1, ..., count of all v]` of groups that each hold rows of one
 * bucket index (`index`, with `counted` of them measured), or NULL when nothing is measured.
 */
function buckets(index: string, counted: string, bounds: readonly number[]): string {
  const le = bounds.map((_, i) => `coalesce(sum(${counted}) FILTER (WHERE ${index} <= ${i + 1}), 0)`);
  return `CASE WHEN sum(${counted}) = 0 THEN NULL ELSE ARRAY[${[...le, `sum(${counted})`].join(', ')}]::bigint[] END`;
}

/**
 * SQL for a CTE body that adds the rows of CTE `source` (which has a `lane` column) to the current minute, by
 * `status` (an SQL expression over `source`), with the durations and lateness (ms expressions, null when not
 * measured) in their histograms. Rows are first grouped by their bucket indexes, so the cumulative counts are
 * summed over a few groups instead of compared bound by bound on every row (the recorder's statement runs this for
 * every batch of outcomes). Groups are written in a fixed order so concurrent writers lock the counter rows in the
 * same order.
 */
export function countInMinutes(
  source: string,
  status: string,
  measured: { durationMs?: string; latenessMs?: string } = {},
): string {
  const { durationMs, latenessMs } = measured;
  const durationIndex = durationMs === undefined ? 'NULL::int' : bucketIndex(durationMs, DURATION_BOUNDS_MS);
  const latenessIndex = latenessMs === undefined ? 'NULL::int' : bucketIndex(latenessMs, LATENESS_BOUNDS_MS);
  return `INSERT INTO execution_minutes (minute, status, lane, count, duration_ms, duration_le, lateness_ms, lateness_le)
       SELECT date_trunc('minute', now()), g.status, g.lane, sum(g.n), sum(g.duration_ms),
              ${durationMs === undefined ? 'NULL::bigint[]' : buckets('g.duration_bucket', 'g.durations', DURATION_BOUNDS_MS)},
              sum(g.lateness_ms),
              ${latenessMs === undefined ? 'NULL::bigint[]' : buckets('g.lateness_bucket', 'g.latenesses', LATENESS_BOUNDS_MS)}
       FROM (SELECT ${status} AS status, lane, ${durationIndex} AS duration_bucket, ${latenessIndex} AS lateness_bucket,
                    count(*)::int AS n, coalesce(sum(${durationMs ?? '0'}), 0) AS duration_ms, count(${durationMs ?? 'NULL'})::int AS durations,
                    coalesce(sum(${latenessMs ?? '0'}), 0) AS lateness_ms, count(${latenessMs ?? 'NULL'})::int AS latenesses
             FROM ${source} GROUP BY 1, 2, 3, 4) g
       GROUP BY 2, 3 ORDER BY 2, 3
       ON CONFLICT (minute, status, lane) DO UPDATE
         SET count = execution_minutes.count + excluded.count, duration_ms = execution_minutes.duration_ms + excluded.duration_ms,
             duration_le = buckets_add(execution_minutes.duration_le, excluded.duration_le),
             lateness_ms = execution_minutes.lateness_ms + excluded.lateness_ms,
             lateness_le = buckets_add(execution_minutes.lateness_le, excluded.lateness_le)`;
}

/** What one call of executionMinutesPrune took out of the roll-up, per status. */
export type PrunedMinutes = Record<string, { count: number; durationMs: number }>;

/**
 * Deletes up to `limit` roll-up rows older than their status's retention (failed and dead: `deadMs`, never less than
 * `historyMs`; the rest: `historyMs`; null keeps forever), oldest first, and returns what the deleted rows counted.
 * The one place roll-up rows are ever deleted. The monotonic totals (execution_totals, metrics.ts) hold every
 * minute up to their watermark, so only those minutes are deleted and the counters they feed never decrease.
 * @example const pruned = await executionMinutesPrune(pool, { historyMs: 30 * 86_400_000, deadMs: 90 * 86_400_000, limit: 1000 });
 */
export async function executionMinutesPrune(
  pool: pg.Pool,
  input: { historyMs: number | null; deadMs: number | null; limit: number },
): Promise<PrunedMinutes> {
  if (input.historyMs === null) return {};
  const deadMs = input.deadMs === null ? null : Math.max(input.deadMs, input.historyMs);
  // Walks the primary key from the oldest minute. Only minutes the monotonic totals already hold (at or before
  // their watermark, see metrics.ts) may go, so the Prometheus counters never drop.
  const { rows } = await pool.query(
    `WITH doomed AS (
       SELECT minute, status, lane FROM execution_minutes
       WHERE minute < now() - make_interval(secs => $1::bigint / 1000.0)
         AND minute <= (SELECT folded_through FROM execution_totals_mark)
         AND (status NOT IN ('failed', 'dead')
              OR ($2::bigint IS NOT NULL AND minute < now() - make_interval(secs => $2::bigint / 1000.0)))
       ORDER BY minute LIMIT $3
       FOR UPDATE SKIP LOCKED
     ),
     gone AS (
       DELETE FROM execution_minutes m USING doomed d WHERE m.minute = d.minute AND m.status = d.status AND m.lane = d.lane
       RETURNING m.status, m.count, m.duration_ms
     )
     SELECT status, sum(count)::bigint AS count, sum(duration_ms)::bigint AS duration_ms FROM gone GROUP BY status`,
    [input.historyMs, deadMs, input.limit],
  );
  const out: PrunedMinutes = {};
  for (const r of rows) out[r.status] = { count: Number(r.count), durationMs: Number(r.duration_ms) };
  return out;
}
