/**
 * @module minutes — the per-minute outcome counts (`execution_minutes`), kept by the statements that finish
 * executions, so throughput, success rate and 24-hour counts read at most 1,440 rows instead of the history.
 */

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
