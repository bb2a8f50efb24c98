/**
 * @module minutes — the per-minute outcome counts (`execution_minutes`), kept by the statements that finish
 * executions, so throughput, success rate, 24-hour counts and the Prometheus counters and histograms read at most
 * a few thousand rows instead of the history.
 */

/**
 * Upper bounds (ms) of the attempt-duration histogram buckets. Part of the schema: the rows store one cumulative
 * count per bound plus the total, so changing these needs a migration that rewrites `duration_le`.
 */
export const DURATION_BOUNDS_MS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 900000, 3600000] as const;
/** Upper bounds (ms) of the schedule-lateness buckets (start minus scheduled time of cron and one-off runs). */
export const LATENESS_BOUNDS_MS = [10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000] as const;

/** `ARRAY[count(*) FILTER (WHERE v <= b1), ..., count(v)]`, or NULL when nothing is measured. */
function buckets(value: string | undefined, bounds: readonly number[]): string {
  if (value === undefined) return 'NULL::bigint[]';
  const le = bounds.map((b) => `count(*) FILTER (WHERE ${value} <= ${b})`);
  return `CASE WHEN count(${value}) = 0 THEN NULL ELSE ARRAY[${[...le, `count(${value})`].join(', ')}]::bigint[] END`;
}

/**
 * SQL for a CTE body that adds the rows of CTE `source` (which has a `lane` column) to the current minute, by
 * `status` (an SQL expression over `source`), with the durations and lateness (ms expressions, null when not
 * measured) in their histograms. Groups are written in a fixed order so concurrent writers lock the counter rows
 * in the same order.
 */
export function countInMinutes(source: string, status: string, measured: { durationMs?: string; latenessMs?: string } = {}): string {
  const duration = measured.durationMs ?? '0';
  const lateness = measured.latenessMs ?? '0';
  return `INSERT INTO execution_minutes (minute, status, lane, count, duration_ms, duration_le, lateness_ms, lateness_le)
       SELECT date_trunc('minute', now()), ${status}, lane, count(*), coalesce(sum(${duration}), 0),
              ${buckets(measured.durationMs, DURATION_BOUNDS_MS)}, coalesce(sum(${lateness}), 0),
              ${buckets(measured.latenessMs, LATENESS_BOUNDS_MS)}
       FROM ${source}
       GROUP BY 2, 3 ORDER BY 2, 3
       ON CONFLICT (minute, status, lane) DO UPDATE
         SET count = execution_minutes.count + excluded.count, duration_ms = execution_minutes.duration_ms + excluded.duration_ms,
             duration_le = buckets_add(execution_minutes.duration_le, excluded.duration_le),
             lateness_ms = execution_minutes.lateness_ms + excluded.lateness_ms,
             lateness_le = buckets_add(execution_minutes.lateness_le, excluded.lateness_le)`;
}
