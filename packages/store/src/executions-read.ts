/** @module executions-read — reading executions: one, lists with keyset pagination, per-minute outcomes, chains (the stats: stats.ts). */
import {
  EXECUTION_STATUSES,
  InvalidInputError,
  LIVE_STATUSES,
  type Execution,
  type ExecutionStatus,
  type ExecutionSummary,
  type ExecutionSummaryIso,
  type Lane,
} from '@jobs/core';
import type pg from 'pg';
import { isId } from './jobs';
import { transaction } from './transaction';
import {
  EXECUTION_COLUMNS,
  EXECUTION_SUMMARY_COLUMNS,
  EXECUTION_SUMMARY_ISO_COLUMNS,
  ISO_PAGE_TYPES,
  PAGE_TYPES,
  toExecution,
  toExecutionSummary,
  toExecutionSummaryIso,
  type ExecutionFieldsRow,
  type ExecutionSummaryRow,
} from './rows';

export interface ExecutionListFilter {
  jobId?: string;
  status?: ExecutionStatus;
  /** Keyset cursor: executions with id below this (newest first). */
  before?: string;
  limit: number;
  /** Each row's live job name too (`jobName`), in the same statement: a dashboard list needs no second read. */
  jobNames?: boolean;
}

export async function executionGet(pool: pg.Pool, id: string): Promise<Execution | null> {
  if (!isId(id)) return null;
  const { rows } = await pool.query(`SELECT ${EXECUTION_COLUMNS} FROM executions WHERE id = $1`, [id]);
  return rows[0] ? toExecution(rows[0]) : null;
}

/**
 * The SQL of one list shape, made so that each filter reads the index that hands out its rows newest first, and a
 * page costs its own rows whatever the history holds. The status is written into the SQL as a literal (one of
 * EXECUTION_STATUSES, never user text), not a parameter: that is what lets the planner prove a partial index applies
 * (executions_rare and executions_rare_job for the rare final statuses, executions_live and executions_lease for the
 * live ones) in any plan, without a redundant predicate that would shrink its row estimate and tempt it to a bitmap
 * scan and a sort of every matching row. Lists of a live status read only live rows: job_id is compared as `job_id
 * + 0`, which no index has, so the job's whole history (executions_job) is never the way in.
 */
function listSql(filter: { job: boolean; status: ExecutionStatus | null; names: boolean; iso: boolean }): string {
  const where: string[] = ['($1::bigint IS NULL OR id < $1)'];
  const live = filter.status !== null && (LIVE_STATUSES as readonly string[]).includes(filter.status);
  if (filter.job) where.push(live ? 'job_id + 0 = $3' : 'job_id = $3');
  if (filter.status === 'succeeded') {
    // The bulk of the history, with no index of its own: said as "none of the others", whose estimate is high with
    // statistics or without, so the planner walks the index in order and stops at the page (an equality estimated
    // at 0.5% on a fresh table made it fetch and sort every row below the cursor instead).
    where.push(
      `status NOT IN (${EXECUTION_STATUSES.filter((x) => x !== 'succeeded')
        .map((x) => `'${x}'`)
        .join(', ')})`,
    );
  } else if (filter.status !== null) where.push(`status = '${filter.status}'`);
  // A subquery in the select list runs for the rows the limit lets through: one probe of the jobs' key a row. The
  // deleted test is in the select list, not the WHERE: there it made the live-name index (jobs_name_live) look
  // cheap without statistics, and each row walked all of it (10,700 buffers for a page).
  const names = filter.names
    ? `, (SELECT CASE WHEN j.deleted_at IS NULL THEN j.name END FROM jobs j WHERE j.id = executions.job_id) AS job_name`
    : '';
  const columns = filter.iso ? EXECUTION_SUMMARY_ISO_COLUMNS : EXECUTION_SUMMARY_COLUMNS;
  return `SELECT ${columns}${names} FROM executions WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $2`;
}

const LIST_SQL = new Map<string, string>();

/**
 * Sent before the list of any status but succeeded, in the same transaction: no bitmap scans, and sorts only as a
 * last resort. Those statuses are rare in the history (or live, and then a backlog may hold a million of them), and
 * when one job holds most of a status's rows (a job that keeps failing) the planner's estimate for "this job and
 * this status" is far too low, so it would fetch and sort all of them to find a page. With these two off it walks
 * the status's partial index in order and stops at the page, whatever the statistics say. And no JIT: without
 * statistics a live status is costed as 1% of the history, past jit_above_cost, and compiling the plan took 10 ms
 * and more for a page read from one index page. Transaction-local (set_config(..., true)): nothing stays on the
 * connection, and no session is pinned behind a pooler.
 */
export const ORDERED_PLANS_SQL = `SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true), set_config('jit', 'off', true)`;

/**
 * The statement executionList (executionListIso with `iso`) sends for `filter` (exported for the plan tests);
 * `ordered`: it runs after ORDERED_PLANS_SQL in one transaction.
 */
export function executionListQuery(
  filter: ExecutionListFilter,
  iso = false,
): { text: string; values: unknown[]; ordered: boolean } {
  const status = filter.status ?? null;
  if (status !== null && !(EXECUTION_STATUSES as readonly string[]).includes(status)) {
    throw new InvalidInputError(`unknown status ${JSON.stringify(String(status).slice(0, 50))}`, 'status');
  }
  const shape = { job: filter.jobId !== undefined, status, names: filter.jobNames === true && !iso, iso };
  const key = `${shape.job}:${shape.status}:${shape.names}:${iso}`;
  let text = LIST_SQL.get(key);
  if (text === undefined) LIST_SQL.set(key, (text = listSql(shape)));
  const values: unknown[] = [filter.before ?? null, filter.limit];
  if (shape.job) values.push(filter.jobId);
  return { text, values, ordered: status !== null && status !== 'succeeded' };
}

/** A page of list rows, newest first (payload and output stay on executionGet). */
export async function executionList(pool: pg.Pool, filter: ExecutionListFilter): Promise<ExecutionSummary[]> {
  if (filter.jobId !== undefined && !isId(filter.jobId)) return [];
  return (await listRows<ExecutionSummaryRow>(pool, executionListQuery(filter), PAGE_TYPES)).map(toExecutionSummary);
}

/**
 * The same page as the API sends it: the instants as ISO strings, read as text and never made into Dates (two
 * conversions of five instants a row, a fifth of a page's cost in the API), no output tail, no job names.
 */
export async function executionListIso(
  pool: pg.Pool,
  filter: Omit<ExecutionListFilter, 'jobNames'>,
): Promise<ExecutionSummaryIso[]> {
  if (filter.jobId !== undefined && !isId(filter.jobId)) return [];
  return (await listRows<ExecutionFieldsRow<string>>(pool, executionListQuery(filter, true), ISO_PAGE_TYPES)).map(
    toExecutionSummaryIso,
  );
}

async function listRows<R>(
  pool: pg.Pool,
  { text, values, ordered }: ReturnType<typeof executionListQuery>,
  types: pg.CustomTypesConfig,
): Promise<R[]> {
  const query = { text, values, types };
  const { rows } = ordered
    ? await transaction(pool, async (client) => {
        await client.query(ORDERED_PLANS_SQL);
        return client.query(query);
      })
    : await pool.query(query);
  return rows as R[];
}

/** Work per lane right now: due and waiting to start, running, and how long the oldest due one has waited. */
export interface LaneLoad {
  waiting: number;
  running: number;
  oldestWaitingAgeMs: number | null;
}

/**
 * Live executions per lane by the database clock (the tick's scaling metrics). Reads only live rows, through the
 * executions_live partial index, so the history's size does not matter.
 */
export async function executionsLoadByLane(pool: pg.Pool): Promise<Record<Lane, LaneLoad>> {
  const { rows } = await pool.query(
    `SELECT lane,
            count(*) FILTER (WHERE status <> 'running' AND scheduled_for <= now())::int AS waiting,
            count(*) FILTER (WHERE status = 'running')::int AS running,
            extract(epoch FROM now() - min(scheduled_for) FILTER (WHERE status <> 'running' AND scheduled_for <= now())) * 1000 AS oldest_ms
     FROM executions WHERE status IN ('queued', 'retrying', 'running') GROUP BY lane`,
  );
  const out: Record<Lane, LaneLoad> = {
    short: { waiting: 0, running: 0, oldestWaitingAgeMs: null },
    long: { waiting: 0, running: 0, oldestWaitingAgeMs: null },
  };
  for (const r of rows) {
    const lane = out[r.lane as Lane];
    if (!lane) continue;
    lane.waiting = r.waiting;
    lane.running = r.running;
    lane.oldestWaitingAgeMs = r.oldest_ms === null ? null : Math.max(0, Math.round(Number(r.oldest_ms)));
  }
  return out;
}

/**
 * executionOutcomesPerMinute's statement ($1: minutes), exported for the plan tests: reads only the rollup rows of
 * the window, a range of its primary key (which leads with the minute) bounded at both ends; generate_series gives
 * the empty minutes their row.
 */
export const OUTCOMES_PER_MINUTE_SQL = `WITH w AS (SELECT date_trunc('minute', now()) - make_interval(mins => $1::int - 1) AS since, date_trunc('minute', now()) AS upto),
     counted AS (
       SELECT e.minute, e.status, sum(e.count)::bigint AS n FROM execution_minutes e, w
       WHERE e.minute >= w.since AND e.minute <= w.upto AND e.status IN ('succeeded', 'failed', 'dead')
       GROUP BY e.minute, e.status
     )
     SELECT m.minute, c.status, coalesce(c.n, 0)::bigint AS n
     FROM w, generate_series(w.since, w.upto, interval '1 minute') AS m(minute)
     LEFT JOIN counted c ON c.minute = m.minute
     ORDER BY m.minute`;

/** Finished attempts of one minute, by outcome (the dashboard's throughput and failure-rate charts). */
export interface MinuteOutcomes {
  minute: Date;
  succeeded: number;
  failed: number;
  dead: number;
}

/**
 * Outcomes per minute over the last `minutes` minutes (default 60), oldest first, one entry per minute up to the
 * current one by the database clock, zeros included.
 * @example const hour = await executionOutcomesPerMinute(pool); hour.at(-1)!.succeeded
 */
export async function executionOutcomesPerMinute(pool: pg.Pool, minutes = 60): Promise<MinuteOutcomes[]> {
  const { rows } = await pool.query(OUTCOMES_PER_MINUTE_SQL, [minutes]);
  const byMinute = new Map<number, MinuteOutcomes>();
  for (const r of rows) {
    const minute = r.minute as Date;
    let entry = byMinute.get(minute.getTime());
    if (!entry) byMinute.set(minute.getTime(), (entry = { minute, succeeded: 0, failed: 0, dead: 0 }));
    if (r.status === 'succeeded' || r.status === 'failed' || r.status === 'dead')
      entry[r.status as 'succeeded'] += Number(r.n);
  }
  return [...byMinute.values()];
}

/** The latest finished attempt of each job (its "last outcome"); jobs without one are absent. */
export async function executionLastOutcomes(
  pool: pg.Pool,
  jobIds: readonly string[],
): Promise<Map<string, { id: string; status: ExecutionStatus; finishedAt: Date }>> {
  const ids = jobIds.filter(isId);
  const result = new Map<string, { id: string; status: ExecutionStatus; finishedAt: Date }>();
  if (ids.length === 0) return result;
  // One probe of executions_job (job_id, id DESC) per job, newest first, stopping at the first finished row.
  const { rows } = await pool.query(
    `SELECT j.id AS job_id, x.id, x.status, x.finished_at FROM unnest($1::bigint[]) AS j(id)
     CROSS JOIN LATERAL (SELECT e.id, e.status, e.finished_at FROM executions e
                         WHERE e.job_id = j.id AND e.finished_at IS NOT NULL ORDER BY e.id DESC LIMIT 1) x`,
    [ids],
  );
  for (const r of rows) result.set(String(r.job_id), { id: String(r.id), status: r.status, finishedAt: r.finished_at });
  return result;
}

/**
 * The attempt chain around one execution, oldest first: the attempts it retries or replays (following retry_of back),
 * and the retries and replays made from it or from its successors. Empty for an unknown id.
 * Both directions follow retry_of (forward through executions_retry_of, which holds only retries and replays), so the
 * chain costs its own rows, however long the job's history.
 */
export async function executionChain(pool: pg.Pool, id: string, limit = 500): Promise<Execution[]> {
  if (!isId(id)) return [];
  const { rows } = await pool.query(
    // Each step is a LATERAL probe (primary key back, executions_retry_of forward): a join there could be planned as
    // a scan of the whole table when the statistics are missing.
    `WITH RECURSIVE back AS (
       SELECT id, retry_of, 0 AS depth FROM executions WHERE id = $1
       UNION ALL
       SELECT p.id, p.retry_of, b.depth + 1 FROM back b
       CROSS JOIN LATERAL (SELECT e.id, e.retry_of FROM executions e WHERE e.id = b.retry_of) p WHERE b.depth < 100
     ),
     later AS (
       SELECT id, 0 AS depth FROM executions WHERE id = $1
       UNION ALL
       SELECT n.id, l.depth + 1 FROM later l
       CROSS JOIN LATERAL (SELECT e.id FROM executions e WHERE e.retry_of = l.id AND e.retry_of IS NOT NULL LIMIT 100) n
       WHERE l.depth < 100
     )
     SELECT ${EXECUTION_COLUMNS} FROM executions
     WHERE id = ANY(ARRAY(SELECT id FROM back UNION SELECT id FROM (SELECT id FROM later LIMIT $2) l)) ORDER BY id`,
    [id, limit],
  );
  return rows.map(toExecution);
}
