/**
 * @module stats — `GET /api/v1/stats` and the overview's figures: live rows, the roll-up's last 24 hours and a
 * duration sample, in one round trip; the roll-up's settled minutes are held by the process between reads.
 */
import { EXECUTION_STATUSES, LANES, LIVE_STATUSES, type ExecutionStatus, type Lane } from '@jobs/core';
import type pg from 'pg';
import { FOLD_LAG_MINUTES } from './metrics';
import { idempotent } from './pool';

export interface ExecutionStats {
  /** Live statuses are exact; final ones count the last 24 hours (from the per-minute rollup). */
  counts: Record<ExecutionStatus, number>;
  byLane: Record<Lane, { queued: number; retrying: number; running: number }>;
  /** Queued executions already due (the rest are fire times materialised ahead, or delayed): what waits for a worker. */
  queuedDue: number;
  throughput: { lastMinute: number; lastHour: number };
  successRate: { lastHour: number | null };
  durationMs: { p50: number | null; p95: number | null; sample: number };
  oldestQueuedAgeMs: number | null;
}

const MINUTE = 60_000;
const DAY = 1440 * MINUTE;
const EVICT_AFTER_MS = 60 * MINUTE;
const HOUR = 60 * MINUTE;
const STATUS_COLUMNS = EXECUTION_STATUSES.map((_, i) => `s${i}`);
const COUNT_COLUMNS = EXECUTION_STATUSES.map(
  (status, i) => `(sum(count) FILTER (WHERE status = '${status}'))::bigint AS ${STATUS_COLUMNS[i]}`,
).join(', ');
const SUCCEEDED = EXECUTION_STATUSES.indexOf('succeeded');
/** Live rows per status (`queued`, any lane) and per status and lane (`queued_short`). */
const LIVE_COLUMNS = LIVE_STATUSES.flatMap((status) => [
  `(count(*) FILTER (WHERE status = '${status}'))::int AS ${status}`,
  ...LANES.map(
    (lane) => `(count(*) FILTER (WHERE status = '${status}' AND lane = '${lane}'))::int AS ${status}_${lane}`,
  ),
]).join(', ');
const RAN = (['succeeded', 'failed', 'dead'] as const).map((status) => EXECUTION_STATUSES.indexOf(status));

/**
 * The stats as one message of statements (no parameters, so the simple protocol sends them all at once: one round
 * trip on one connection), each reading a bounded part:
 * - the database clock, with JIT and parallel plans turned off for the message's implicit transaction: without
 *   statistics the planner costs the live-row reads as if 1% of the history were live, which crosses
 *   jit_above_cost (compiling them took 15 ms or more for a read of one index page) and makes a single-row
 *   aggregate worth two workers (16 ms to start them);
 * - live rows, through executions_live, counted per status and lane in one row: as GROUP BY, the same estimate
 *   sized a hash table for 29,500 groups (1.5 MB, about 0.4 ms a read at 5 million rows without statistics);
 * - the roll-up's minutes of the last 24 hours after `heldThrough` (the minutes the reader holds, see statsReader;
 *   null: none), one row a minute (its number since the epoch, and a column of counts per status: a first read
 *   parses 1,440 rows of integers, not 3,000 of timestamps): a range of its primary key bounded at both ends,
 *   because with the lower bound alone a table without statistics is estimated at a third of its rows and read
 *   whole, where a range of the leading key column is estimated small and read as one. `heldThrough` is written in
 *   as a literal (a timestamp the database returned, never user input) so the message keeps no parameters;
 * - durations of the attempts among the newest 1,000 rows that finished within the hour: a walk of the primary key
 *   back from the newest row, whatever the history (no index on finished_at: it would cost every recorded outcome
 *   an index insert; ids grow with time).
 * @example executionStatsSql(null)  // the first read: the whole 24-hour window
 */
export function executionStatsSql(heldThrough: Date | null): string {
  const since = heldThrough === null ? '' : `, '${heldThrough.toISOString()}'::timestamptz`;
  return `SELECT set_config('jit', 'off', true), set_config('max_parallel_workers_per_gather', '0', true), now() AS now;
SELECT ${LIVE_COLUMNS}, (count(*) FILTER (WHERE status = 'queued' AND scheduled_for <= now()))::int AS due FROM executions
WHERE status IN (${LIVE_STATUSES.map((status) => `'${status}'`).join(', ')});
SELECT (extract(epoch FROM minute) / 60)::int AS m, ${COUNT_COLUMNS} FROM execution_minutes
WHERE minute > greatest(now() - interval '24 hours'${since}) AND minute <= now() GROUP BY minute;
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95, count(*)::int AS n
FROM (SELECT duration_ms, finished_at FROM executions ORDER BY id DESC LIMIT 1000) recent
WHERE duration_ms IS NOT NULL AND finished_at > now() - interval '1 hour';
SELECT extract(epoch FROM now() - min(queued_at)) * 1000 AS age FROM executions WHERE status = 'queued' AND scheduled_for <= now()`;
}

/** The first read's statements (the plan tests check them, and executionStatsSql(some minute) with them). */
export const EXECUTION_STATS_SQL = executionStatsSql(null);

/** Counts of one roll-up minute, per status in the order of EXECUTION_STATUSES. */
type MinuteCounts = number[];

/**
 * Makes the stats read of one process. The roll-up rows of a minute stop changing once no statement that began in
 * it can still be running: every writer adds to date_trunc('minute', now()) (countInMinutes, minutes.ts), and
 * retention deletes only minutes older than HISTORY_RETENTION. So the reader holds the counts of the settled
 * minutes of the window (those at least FOLD_LAG_MINUTES before the current minute, the margin the metrics fold
 * uses, longer than any writer's statement timeout) and each read asks the database only for the minutes after
 * them: two or three minutes instead of 1,440 when the stats are read every few seconds. The figures mean what they
 * meant when the whole window was read each time; each process (API, Lambda) holds its own minutes, and its first
 * read, or one after a day without reads, reads the whole window. A write later than the margin (a statement
 * running longer) is missing from a process that held its minute already, as it is from the metrics counters.
 * `holdMinutes: false` reads the whole window every time: when retention is under 24 hours, minutes of the window
 * are deleted, and a held copy would keep counting them.
 * @example const stats = statsReader(pool, { holdMinutes: true }); (await stats()).throughput.lastHour
 */
export function statsReader(pool: pg.Pool, options: { holdMinutes: boolean }): () => Promise<ExecutionStats> {
  const held = new Map<number, MinuteCounts>();
  /** Every settled minute of the window up to this one is in `held` (ms since the epoch; null: none held). */
  let heldThrough: number | null = null;
  /** Bumped when a minute is held: the sums of `held` over a window are kept until it or the window changes. */
  let version = 0;
  let sums: { key: string; day: number[]; hour: number[] } | null = null;
  return async function executionStats(): Promise<ExecutionStats> {
    const since = options.holdMinutes && heldThrough !== null ? new Date(heldThrough) : null;
    const results = (await pool.query(idempotent({ text: executionStatsSql(since) }))) as unknown as pg.QueryResult[];
    const [clock, live, window, durations, oldest] = results as [
      pg.QueryResult,
      pg.QueryResult,
      pg.QueryResult,
      pg.QueryResult,
      pg.QueryResult,
    ];
    const now = (clock.rows[0].now as Date).getTime();
    const currentMinute = Math.floor(now / MINUTE) * MINUTE;
    const settled = currentMinute - FOLD_LAG_MINUTES * MINUTE;
    // The first minute inside the last 24 hours and inside the last hour (minute > now - 24 h is minute >= dayFrom).
    const dayFrom = Math.floor((now - DAY) / MINUTE) * MINUTE + MINUTE;
    const hourFrom = Math.floor((now - HOUR) / MINUTE) * MINUTE + MINUTE;
    const day = zeros();
    const hour = zeros();
    const recent = zeros();
    const read: [number, MinuteCounts][] = window.rows.map((r) => [
      r.m * MINUTE,
      STATUS_COLUMNS.map((c) => (r[c] === null ? 0 : Number(r[c]))),
    ]);
    if (options.holdMinutes) {
      // Whole minutes replace whole minutes: a concurrent read of the same minutes sets the same counts.
      for (const [minute, counts] of read) {
        if (minute <= settled) {
          held.set(minute, counts);
          version++;
        }
      }
      if (heldThrough === null || settled > heldThrough) heldThrough = settled;
      const key = `${dayFrom} ${hourFrom} ${settled} ${version}`;
      if (sums?.key !== key) {
        sums = { key, day: zeros(), hour: zeros() };
        for (const [minute, counts] of held) {
          // Minutes leave an hour after the window: a read still in flight, with an earlier clock, may count them.
          if (minute < dayFrom - EVICT_AFTER_MS) held.delete(minute);
          else if (minute >= dayFrom && minute <= settled) {
            add(sums.day, counts);
            if (minute >= hourFrom) add(sums.hour, counts);
          }
        }
      }
      add(day, sums.day);
      add(hour, sums.hour);
    }
    for (const [minute, counts] of read) {
      if (options.holdMinutes && minute <= settled) continue; // in the sums above
      add(day, counts);
      if (minute >= hourFrom) add(hour, counts);
      if (minute >= currentMinute - MINUTE) add(recent, counts);
    }
    return summarise({ live: live.rows[0], durations: durations.rows[0], oldest: oldest.rows[0], day, hour, recent });
  };
}

const zeros = () => EXECUTION_STATUSES.map(() => 0);

function add(into: number[], counts: readonly number[]): void {
  for (let i = 0; i < into.length; i++) into[i]! += counts[i]!;
}

/** The stats from the statements' rows and the window's counts per status (EXECUTION_STATUSES order). */
function summarise(input: {
  /** The live statement's one row: LIVE_COLUMNS and `due`. */
  live: Record<string, number>;
  durations: { p50: number | null; p95: number | null; n: number } | undefined;
  oldest: { age: string | number | null } | undefined;
  day: number[];
  hour: number[];
  recent: number[];
}): ExecutionStats {
  const counts = Object.fromEntries(EXECUTION_STATUSES.map((status, i) => [status, input.day[i]!])) as Record<
    ExecutionStatus,
    number
  >;
  const byLane = {} as ExecutionStats['byLane'];
  for (const lane of LANES) byLane[lane] = { queued: 0, retrying: 0, running: 0 };
  for (const status of LIVE_STATUSES) {
    counts[status] += input.live[status]!;
    for (const lane of LANES) byLane[lane][status] = input.live[`${status}_${lane}`]!;
  }
  const queuedDue = input.live.due!;
  // Throughput counts attempts that ran.
  const ran = (of: number[]) => RAN.reduce((n, i) => n + of[i]!, 0);
  const lastHour = ran(input.hour);
  const d = input.durations;
  const age = input.oldest?.age;
  return {
    counts,
    byLane,
    queuedDue,
    throughput: { lastMinute: ran(input.recent), lastHour },
    successRate: { lastHour: lastHour === 0 ? null : input.hour[SUCCEEDED]! / lastHour },
    durationMs: { p50: d?.p50 ?? null, p95: d?.p95 ?? null, sample: d?.n ?? 0 },
    oldestQueuedAgeMs: age === null || age === undefined ? null : Math.round(Number(age)),
  };
}
