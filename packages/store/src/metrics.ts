/**
 * @module metrics — what the Prometheus series read from PostgreSQL at scrape time, and the fold that keeps the
 * finished-attempt counters monotonic.
 *
 * Counters and histograms are `execution_totals` (minutes up to a watermark, folded in by totalsFold) plus the
 * `execution_minutes` rows after the watermark, read in one statement (one snapshot) so a concurrent fold is seen
 * entirely or not at all. Retention may delete old minutes (and executions) freely as long as they are at or before the
 * watermark, which trails the clock by FOLD_LAG: the counters never see those rows again and never drop.
 */
import type pg from 'pg';

/**
 * A minute is folded only once it is this old: a statement that began in it may still be adding to it. Longer than
 * any writer's statement timeout (DATABASE_QUERY_TIMEOUT, 60 s by default); a write later still is not lost from the
 * history, only from the counters (which never count it twice, and never drop).
 */
export const FOLD_LAG_MINUTES = 2;
const FOLD_LAG = `${FOLD_LAG_MINUTES} minutes`;
/** The most one fold pass takes in (a bounded pass: after a long stop, catching up takes one pass per day missed). */
const FOLD_SPAN = '1 day';

/** Finished attempts of one (status, lane), since the counters began, with their histograms' bucket counts. */
export interface FinishedTotals {
  status: string;
  lane: string;
  count: number;
  durationMsSum: number;
  /** Cumulative counts per DURATION_BOUNDS_MS bound, then the count measured; null: none measured. */
  durationLe: number[] | null;
  latenessMsSum: number;
  latenessLe: number[] | null;
}

interface LiveCounts {
  status: string;
  lane: string;
  count: number;
}

export interface MetricsSnapshot {
  finished: FinishedTotals[];
  live: LiveCounts[];
  /** Per lane, how long the oldest due execution that has not started has waited (ms); absent: none waits. */
  oldestWaitingMs: Record<string, number>;
}

/**
 * The scrape's one statement (exported for the bench's EXPLAIN of exactly what a scrape runs): the finished totals,
 * the live rows and the watermark, in one snapshot and one round trip. Rows of kind `finished` are the totals plus
 * the minutes after the watermark; `live` the live rows per status and lane, through the executions_live partial
 * index; `mark` the watermark. $1 is a lower bound of the watermark known to the caller (the one the last scrape
 * saw: it only moves forward), so the roll-up is read by a range probe of its primary key from there whatever the
 * plan: compared with the subquery alone, the planner assumes a third of the table and scans it all.
 */
export const METRICS_SQL = `WITH mark AS (SELECT folded_through FROM execution_totals_mark),
     finished AS (
       SELECT status, lane, count, duration_ms, duration_le, lateness_ms, lateness_le FROM execution_totals
       UNION ALL
       SELECT status, lane, count, duration_ms, duration_le, lateness_ms, lateness_le FROM execution_minutes
       WHERE minute > $1 AND minute > (SELECT folded_through FROM mark) AND lane <> ''
     )
     SELECT 'finished' AS kind, status, lane, sum(count)::bigint AS count, sum(duration_ms)::bigint AS duration_ms,
            buckets_sum(duration_le) AS duration_le, sum(lateness_ms)::bigint AS lateness_ms, buckets_sum(lateness_le) AS lateness_le,
            NULL::float8 AS oldest_ms, NULL::timestamptz AS mark
     FROM finished GROUP BY status, lane
     UNION ALL
     SELECT 'live', status, lane, count(*), NULL, NULL, NULL, NULL,
            extract(epoch FROM now() - min(scheduled_for) FILTER (WHERE status <> 'running' AND scheduled_for <= now())) * 1000, NULL
     FROM executions WHERE status IN ('queued', 'retrying', 'running') GROUP BY status, lane
     UNION ALL
     SELECT 'mark', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, folded_through FROM mark`;

const nums = (a: unknown): number[] | null => (Array.isArray(a) ? a.map(Number) : null);

/**
 * Reads the scrape's figures from PostgreSQL: one statement, which reads no history. Holds the watermark the last
 * read saw as the next one's lower bound; the first read asks for it on its own. Should the watermark ever
 * move back (nothing in the code does), the minutes between it and the bound would be missed, so the read is
 * repeated from the watermark it returned.
 */
export function metricsReader(pool: pg.Pool): () => Promise<MetricsSnapshot> {
  let bound: Date | null = null;
  return async function metricsSnapshot(): Promise<MetricsSnapshot> {
    bound ??= await totalsFoldedThrough(pool);
    let { rows } = await pool.query(METRICS_SQL, [bound]);
    let mark: Date = rows.find((r) => r.kind === 'mark')!.mark;
    if (mark < bound) ({ rows } = await pool.query(METRICS_SQL, [mark]));
    mark = rows.find((r) => r.kind === 'mark')!.mark;
    bound = mark;
    const oldestWaitingMs: Record<string, number> = {};
    const finished: FinishedTotals[] = [];
    const live: LiveCounts[] = [];
    for (const r of rows) {
      if (r.kind === 'finished') {
        finished.push({
          status: r.status,
          lane: r.lane,
          count: Number(r.count),
          durationMsSum: Number(r.duration_ms),
          durationLe: nums(r.duration_le),
          latenessMsSum: Number(r.lateness_ms),
          latenessLe: nums(r.lateness_le),
        });
      } else if (r.kind === 'live') {
        live.push({ status: r.status, lane: r.lane, count: Number(r.count) });
        if (r.oldest_ms !== null)
          oldestWaitingMs[r.lane] = Math.max(oldestWaitingMs[r.lane] ?? 0, Math.max(0, Number(r.oldest_ms)));
      }
    }
    return { finished, live, oldestWaitingMs };
  };
}

export interface FoldResult {
  groups: number;
  /** The new watermark; null: nothing to fold, or another pass holds it. */
  foldedThrough: Date | null;
  /** What this pass folded, per status and lane: each closed minute is folded by exactly one pass. */
  folded: { status: string; lane: string; count: number }[];
}

/**
 * One bounded fold pass: adds the closed minutes after the watermark (at most FOLD_SPAN of them, none younger than
 * FOLD_LAG) to execution_totals and moves the watermark, in one statement. Concurrent passes skip the locked
 * watermark row instead of waiting, so running it from every scheduler tick is safe. Each minute is folded once,
 * so what a pass returns can be published as a count (the tick's CloudWatch `AttemptsFinished`).
 * @example await totalsFold(pool)  // { groups: 2, foldedThrough: 2026-12-01T11:50:00.000Z, folded: [...] }
 */
export async function totalsFold(pool: pg.Pool): Promise<FoldResult> {
  const { rows } = await pool.query(
    `WITH mark AS (
       SELECT folded_through AS since,
              least(folded_through + interval '${FOLD_SPAN}', date_trunc('minute', now()) - interval '${FOLD_LAG}') AS upto
       FROM execution_totals_mark FOR UPDATE SKIP LOCKED
     ),
     source AS (
       SELECT m.status, m.lane, sum(m.count) AS count, sum(m.duration_ms) AS duration_ms, buckets_sum(m.duration_le) AS duration_le,
              sum(m.lateness_ms) AS lateness_ms, buckets_sum(m.lateness_le) AS lateness_le
       FROM execution_minutes m, mark
       WHERE m.minute > mark.since AND m.minute <= mark.upto AND m.lane <> ''
       GROUP BY m.status, m.lane ORDER BY m.status, m.lane
     ),
     folded AS (
       INSERT INTO execution_totals AS t (status, lane, count, duration_ms, duration_le, lateness_ms, lateness_le)
       SELECT * FROM source
       ON CONFLICT (status, lane) DO UPDATE
         SET count = t.count + excluded.count, duration_ms = t.duration_ms + excluded.duration_ms,
             duration_le = buckets_add(t.duration_le, excluded.duration_le),
             lateness_ms = t.lateness_ms + excluded.lateness_ms, lateness_le = buckets_add(t.lateness_le, excluded.lateness_le)
       RETURNING 1
     ),
     moved AS (
       UPDATE execution_totals_mark SET folded_through = mark.upto FROM mark WHERE mark.upto > mark.since
       RETURNING folded_through
     )
     SELECT (SELECT count(*) FROM folded)::int AS groups, (SELECT folded_through FROM moved) AS folded_through,
            (SELECT coalesce(json_agg(json_build_object('status', status, 'lane', lane, 'count', count)), '[]') FROM source) AS source`,
  );
  const r = rows[0];
  return {
    groups: r.groups,
    foldedThrough: r.folded_through,
    folded: (r.source as { status: string; lane: string; count: number | string }[]).map((f) => ({
      ...f,
      count: Number(f.count),
    })),
  };
}

/** The watermark: retention must delete only execution_minutes rows at or before it. */
export async function totalsFoldedThrough(pool: pg.Pool): Promise<Date> {
  const { rows } = await pool.query('SELECT folded_through FROM execution_totals_mark');
  return rows[0].folded_through;
}
