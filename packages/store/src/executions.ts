/**
 * @module executions — the hot-path SQL on executions: start, finish, heartbeat, release, and lease expiry.
 * Every state change is one conditional UPDATE over a batch (unnest); a row that did not match lost its race.
 */
import type { Claim, CreatedExecution, ExpiredExecution, FinishResult, Outcome, QueueItem, StartResult, StartedExecution } from '@jobs/core';
import type pg from 'pg';
import { CREATED_COLUMNS, toCreated, toQueueItem } from './rows';
import { startWithOverlap } from './overlap';

const STARTED_RETURNING = `e.id, c.token, e.job_id, e.attempt, coalesce(e.root_id, e.id) AS root_id, e.trigger, e.lane,
  e.priority, e.scheduled_for, coalesce(e.payload, j.payload) AS payload, j.command, j.handler, j.timeout_ms,
  j.max_retries, j.backoff_base_ms, j.backoff_factor, j.backoff_max_ms, j.backoff_jitter, j.overlap`;

export function toStarted(r: any): StartedExecution {
  return {
    id: r.id,
    token: r.token,
    jobId: r.job_id,
    attempt: r.attempt,
    rootId: r.root_id,
    trigger: r.trigger,
    lane: r.lane,
    priority: r.priority,
    scheduledFor: r.scheduled_for,
    payload: r.payload,
    command: r.command,
    handler: r.handler,
    timeoutMs: r.timeout_ms,
    maxRetries: r.max_retries,
    backoff: { baseMs: r.backoff_base_ms, factor: r.backoff_factor, maxMs: r.backoff_max_ms, jitter: r.backoff_jitter },
    overlap: r.overlap,
  };
}

/** SQL that marks claimed rows running under their lease tokens; `$1` worker, `$2` lease ms, `$3` ids, `$4` tokens. */
export const START_SQL = (extraWhere: string) => `
  UPDATE executions e
  SET status = 'running', worker_id = $1, lease_token = c.token, started_at = now(),
      lease_expires_at = now() + make_interval(secs => $2::double precision / 1000)
  FROM unnest($3::bigint[], $4::text[]) AS c(id, token), jobs j
  WHERE e.id = c.id AND e.status IN ('queued', 'retrying') AND j.id = e.job_id ${extraWhere}
  RETURNING ${STARTED_RETURNING}`;

/**
 * Starts a batch of claimed executions. Jobs that allow overlap (the common case) start in one statement;
 * the rest go through a transaction that serialises on the job row (see overlap.ts).
 */
export async function executionsStart(
  pool: pg.Pool,
  input: { workerId: string; leaseMs: number; claims: Claim[] },
): Promise<StartResult> {
  const claims = [...input.claims].sort((a, b) => Number(BigInt(a.id) - BigInt(b.id)));
  const { rows } = await pool.query(START_SQL(`AND j.overlap = 'allow'`), [
    input.workerId,
    input.leaseMs,
    claims.map((c) => c.id),
    claims.map((c) => c.token),
  ]);
  const result: StartResult = { started: rows.map(toStarted), skipped: [], notStarted: [], replaced: [] };
  if (rows.length === claims.length) return result;
  const startedIds = new Set(result.started.map((s) => s.id));
  const rest = claims.filter((c) => !startedIds.has(c.id));
  const slow = await startWithOverlap(pool, { workerId: input.workerId, leaseMs: input.leaseMs, claims: rest });
  result.started.push(...slow.started);
  result.skipped = slow.skipped;
  result.notStarted = slow.notStarted;
  result.replaced = slow.replaced;
  return result;
}

/**
 * Records outcomes and creates the retry attempts of failed ones in one statement, so an outcome and its retry
 * commit together or not at all. Fencing: a row is written only while it is still running under the same token.
 */
export async function executionsFinish(pool: pg.Pool, outcomes: Outcome[]): Promise<FinishResult> {
  if (outcomes.length === 0) return { recorded: [], rejected: [], retries: [] };
  const sorted = [...outcomes].sort((a, b) => Number(BigInt(a.id) - BigInt(b.id)));
  const { rows } = await pool.query(
    `WITH input AS (
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::int[], $8::int[])
         AS i(id, token, status, exit_code, output, error, duration_ms, retry_delay_ms)
     ),
     done AS (
       UPDATE executions e
       SET status = i.status, finished_at = now(), exit_code = i.exit_code, output = i.output, error = i.error,
           duration_ms = i.duration_ms, lease_expires_at = NULL
       FROM input i
       WHERE e.id = i.id AND e.status = 'running' AND e.lease_token = i.token
       RETURNING e.id, e.job_id, coalesce(e.root_id, e.id) AS root_id, e.attempt, e.lane, e.priority, e.payload,
                 i.status AS outcome, i.retry_delay_ms, i.duration_ms
     ),
     retries AS (
       INSERT INTO executions (job_id, root_id, retry_of, attempt, trigger, status, lane, priority, scheduled_for, payload)
       SELECT job_id, root_id, id, attempt + 1, 'retry', 'retrying', lane, priority,
              now() + make_interval(secs => coalesce(retry_delay_ms, 0)::double precision / 1000), payload
       FROM done WHERE outcome = 'failed'
       RETURNING ${CREATED_COLUMNS}
     ),
     minutes AS (
       INSERT INTO execution_minutes (minute, status, count, duration_ms)
       SELECT date_trunc('minute', now()), outcome, count(*), coalesce(sum(duration_ms), 0) FROM done
       GROUP BY outcome ORDER BY outcome -- a fixed lock order between concurrent writers
       ON CONFLICT (minute, status) DO UPDATE
         SET count = execution_minutes.count + excluded.count, duration_ms = execution_minutes.duration_ms + excluded.duration_ms
     )
     SELECT 'done' AS kind, id, NULL::bigint AS job_id, NULL::int AS attempt, NULL AS trigger, NULL AS status,
            NULL AS lane, NULL::int AS priority, NULL::timestamptz AS scheduled_for FROM done
     UNION ALL
     SELECT 'retry', ${CREATED_COLUMNS} FROM retries`,
    [
      sorted.map((o) => o.id),
      sorted.map((o) => o.token),
      sorted.map((o) => o.status),
      sorted.map((o) => o.exitCode),
      sorted.map((o) => o.output),
      sorted.map((o) => o.error),
      sorted.map((o) => o.durationMs),
      sorted.map((o) => o.retryDelayMs),
    ],
  );
  const done = new Set<string>();
  const retries: CreatedExecution[] = [];
  for (const r of rows) {
    if (r.kind === 'done') done.add(r.id);
    else retries.push(toCreated(r));
  }
  return {
    recorded: outcomes.filter((o) => done.has(o.id)),
    rejected: outcomes.filter((o) => !done.has(o.id)),
    retries,
  };
}

/** Extends the leases of attempts still running under these tokens; returns their ids. */
export async function executionsHeartbeat(
  pool: pg.Pool,
  input: { workerId: string; leaseMs: number; claims: Claim[] },
): Promise<Set<string>> {
  if (input.claims.length === 0) return new Set();
  const { rows } = await pool.query(
    `UPDATE executions e SET lease_expires_at = now() + make_interval(secs => $1::double precision / 1000)
     FROM unnest($2::bigint[], $3::text[]) AS c(id, token)
     WHERE e.id = c.id AND e.status = 'running' AND e.lease_token = c.token
     RETURNING e.id`,
    [input.leaseMs, input.claims.map((c) => c.id), input.claims.map((c) => c.token)],
  );
  return new Set(rows.map((r) => r.id as string));
}

/** Gives attempts back as queued (same attempt, no retry used): a shutdown is not the job's failure. */
export async function executionsRelease(pool: pg.Pool, claims: Claim[]): Promise<CreatedExecution[]> {
  if (claims.length === 0) return [];
  const { rows } = await pool.query(
    `UPDATE executions e
     SET status = 'queued', worker_id = NULL, lease_token = NULL, lease_expires_at = NULL, started_at = NULL,
         scheduled_for = least(e.scheduled_for, now())
     FROM unnest($1::bigint[], $2::text[]) AS c(id, token)
     WHERE e.id = c.id AND e.status = 'running' AND e.lease_token = c.token
     RETURNING e.id, e.job_id, e.attempt, e.trigger, e.status, e.lane, e.priority, e.scheduled_for`,
    [claims.map((c) => c.id), claims.map((c) => c.token)],
  );
  return rows.map(toCreated);
}

/** Running attempts whose lease has passed by the database's clock (one clock for every worker and reaper). */
export async function executionsLeaseExpired(pool: pg.Pool, limit: number): Promise<ExpiredExecution[]> {
  const { rows } = await pool.query(
    `SELECT e.id, e.lease_token, e.job_id, e.attempt, e.lane, e.priority, e.worker_id, j.max_retries,
            j.backoff_base_ms, j.backoff_factor, j.backoff_max_ms, j.backoff_jitter
     FROM executions e JOIN jobs j ON j.id = e.job_id
     WHERE e.status = 'running' AND e.lease_expires_at < now()
     ORDER BY e.lease_expires_at LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({
    id: r.id,
    token: r.lease_token,
    jobId: r.job_id,
    attempt: r.attempt,
    lane: r.lane,
    priority: r.priority,
    workerId: r.worker_id,
    maxRetries: r.max_retries,
    backoff: { baseMs: r.backoff_base_ms, factor: r.backoff_factor, maxMs: r.backoff_max_ms, jitter: r.backoff_jitter },
  }));
}

/** Waiting executions after `afterId`, in id order: the reconciler's page. */
export async function executionsWaitingPage(
  pool: pg.Pool,
  input: { afterId: string | null; limit: number },
): Promise<QueueItem[]> {
  const { rows } = await pool.query(
    `SELECT id, lane, priority, scheduled_for FROM executions
     WHERE status IN ('queued', 'retrying') AND ($1::bigint IS NULL OR id > $1)
     ORDER BY id LIMIT $2`,
    [input.afterId, input.limit],
  );
  return rows.map(toQueueItem);
}

export async function executionsWaiting(pool: pg.Pool, ids: readonly string[]): Promise<QueueItem[]> {
  if (ids.length === 0) return [];
  const { rows } = await pool.query(
    `SELECT id, lane, priority, scheduled_for FROM executions WHERE id = ANY($1::bigint[]) AND status IN ('queued', 'retrying')`,
    [ids],
  );
  return rows.map(toQueueItem);
}
