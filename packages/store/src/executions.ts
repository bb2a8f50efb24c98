/**
 * @module executions — the hot-path SQL on executions: start, finish, heartbeat, release, and lease expiry.
 * Every state change is one conditional UPDATE over a batch (unnest); a row that did not match lost its race.
 * Batch statements say `e.id = ANY($ids)` besides joining the unnest: it pins the plan to primary-key lookups even
 * when statistics are stale (a fresh table), where the planner would otherwise scan every live row per batch.
 */
import type {
  Claim,
  CreatedExecution,
  ExpiredExecution,
  FinishResult,
  Outcome,
  QueueItem,
  RecordResult,
  StartRecord,
  StartResult,
  StartedExecution,
  WaitingExecution,
} from '@jobs/core';
import type pg from 'pg';
import { CREATED_COLUMNS, toBackoff, toCreated, toQueueItem, type CreatedRow } from './rows';
import type { JobDefinitions } from './job-definitions';
import { countInMinutes } from './minutes';
import { startWithOverlap } from './overlap';
import { idempotent } from './pool';
import { DELIVERY_SQL, type TraceRead } from './started';

/**
 * Reads claimed executions that are still waiting, with their job's definition (from a short-lived cache, see
 * job-definitions.ts): what a worker needs to run them. A read, so the common path writes nothing before the
 * attempt runs (its start record goes out with the next batch of writes).
 */
export async function executionsLoad(
  pool: pg.Pool,
  definitions: JobDefinitions,
  claims: Claim[],
  read: TraceRead,
): Promise<{ loaded: StartedExecution[]; notStarted: string[] }> {
  if (claims.length === 0) return { loaded: [], notStarted: [] };
  const tokens = new Map(claims.map((c) => [c.id, c.token]));
  const { rows } = await pool.query({
    name: read.traceparent ? 'executions_load_traced' : 'executions_load',
    // The job's current version keys the definition cache, so an edit is never served stale. Read once per distinct
    // job of the batch (a claim batch is mostly a few jobs), not once per row.
    text: `WITH claimed AS MATERIALIZED (
       SELECT e.id, e.job_id, e.attempt, coalesce(e.root_id, e.id) AS root_id, e.trigger, e.lane, e.priority,
              e.scheduled_for, e.payload, e.flow_key, ${DELIVERY_SQL('e')} AS delivery${read.traceparent ? ', e.traceparent' : ''}
       FROM executions e
       WHERE e.id = ANY($1::bigint[]) AND e.status IN ('queued', 'retrying') AND e.lease_token IS NULL),
     versions AS MATERIALIZED (
       SELECT j.id, j.version FROM jobs j WHERE j.id = ANY(ARRAY(SELECT DISTINCT c.job_id FROM claimed c)))
     SELECT c.*, v.version AS job_version FROM claimed c JOIN versions v ON v.id = c.job_id`,
    values: [claims.map((c) => c.id)],
  });
  const jobs = await definitions.get(
    pool,
    rows.map((r) => ({ id: r.job_id as string, version: r.job_version as number })),
  );
  const loaded: StartedExecution[] = [];
  for (const r of rows) {
    const job = jobs.get(r.job_id);
    if (!job) continue; // cannot happen while jobs are only soft-deleted; treated as not startable
    const { version, ...definition } = job;
    loaded.push({
      ...definition,
      id: r.id,
      token: tokens.get(r.id)!,
      jobId: r.job_id,
      attempt: r.attempt,
      rootId: r.root_id,
      trigger: r.trigger,
      lane: r.lane,
      priority: r.priority,
      scheduledFor: r.scheduled_for,
      payload: r.payload ?? job.payload,
      flowKey: r.flow_key,
      jobVersion: version,
      delivery: r.delivery,
      traceparent: r.traceparent ?? null,
    });
  }
  const found = new Set(loaded.map((l) => l.id));
  return { loaded, notStarted: claims.filter((c) => !found.has(c.id)).map((c) => c.id) };
}

/** Starts executions of overlap-restricted jobs before they run (see overlap.ts). */
export async function executionsStart(
  pool: pg.Pool,
  input: { workerId: string; leaseMs: number; claims: Claim[] },
  read: TraceRead,
): Promise<StartResult> {
  return startWithOverlap(pool, input, read);
}

// Inputs arrive as two JSON arrays (one parameter each: far cheaper for the worker to send than fifteen typed
// arrays), and the result is one row of JSON arrays. Each UPDATE also says `e.id = ANY(<its ids>)`, which pins its
// plan to primary-key lookups even on stale statistics.
const RECORD_SQL = `WITH start_input AS (
       SELECT * FROM json_to_recordset($3::json) AS s(id bigint, token text, elapsed_ms int, job_version int)
     ),
     starts AS (
       UPDATE executions e
       SET status = 'running', worker_id = $1, lease_token = s.token, job_version = s.job_version,
           started_at = now() - make_interval(secs => s.elapsed_ms::double precision / 1000),
           lease_expires_at = now() + make_interval(secs => $2::double precision / 1000)
       FROM start_input s
       WHERE e.id = ANY(ARRAY(SELECT id FROM start_input)) AND e.id = s.id
         AND e.status IN ('queued', 'retrying') AND e.lease_token IS NULL
       RETURNING e.id
     ),
     input AS (
       SELECT * FROM json_to_recordset($4::json) AS i(id bigint, token text, status text, exit_code int, output text,
         error text, duration_ms int, retry_delay_ms int, worker_id text, started_ago_ms int, job_version int)
     ),
     done AS (
       UPDATE executions e
       SET status = i.status, finished_at = now(), exit_code = i.exit_code, output = i.output, error = i.error,
           duration_ms = i.duration_ms, lease_expires_at = NULL,
           started_at = coalesce(e.started_at,
             now() - make_interval(secs => coalesce(i.started_ago_ms, i.duration_ms)::double precision / 1000)),
           worker_id = coalesce(e.worker_id, i.worker_id), lease_token = coalesce(e.lease_token, i.token),
           job_version = coalesce(e.job_version, i.job_version)
       FROM input i
       WHERE e.id = ANY(ARRAY(SELECT id FROM input)) AND e.id = i.id
         AND ((e.status = 'running' AND e.lease_token = i.token)
           OR (e.status IN ('queued', 'retrying') AND e.lease_token IS NULL))
       RETURNING e.id, e.job_id, coalesce(e.root_id, e.id) AS root_id, e.attempt, e.lane, e.priority, e.payload,
                 e.flow_key, e.traceparent, i.status AS outcome, i.retry_delay_ms, i.duration_ms,
                 CASE WHEN e.trigger IN ('cron', 'once')
                      THEN greatest(0, extract(epoch FROM e.started_at - e.scheduled_for) * 1000) END AS lateness_ms
     ),
     retries AS (
       INSERT INTO executions (job_id, root_id, retry_of, attempt, trigger, status, lane, priority, scheduled_for, payload,
         flow_key, traceparent)
       -- The job's current lane and priority: a retry is an attempt that starts later, so an edit applies to it.
       SELECT d.job_id, d.root_id, d.id, d.attempt + 1, 'retry', 'retrying', j.lane, j.priority,
              now() + make_interval(secs => coalesce(d.retry_delay_ms, 0)::double precision / 1000), d.payload, d.flow_key,
              d.traceparent
       FROM done d JOIN jobs j ON j.id = d.job_id WHERE d.outcome = 'failed'
       RETURNING ${CREATED_COLUMNS}
     ),
     minutes AS (
       ${countInMinutes('done', 'outcome', { durationMs: 'duration_ms', latenessMs: 'lateness_ms' })}
     )
     SELECT (SELECT coalesce(json_agg(id::text), '[]') FROM starts) AS started,
            (SELECT coalesce(json_agg(id::text), '[]') FROM done) AS done,
            (SELECT coalesce(json_agg(json_build_object('id', id::text, 'job_id', job_id::text, 'attempt', attempt,
               'trigger', trigger, 'status', status, 'lane', lane, 'priority', priority, 'scheduled_for', scheduled_for,
               'flow_key', flow_key)), '[]')
             FROM retries) AS retries`;

/**
 * Text PostgreSQL can store: NUL characters and unpaired surrogates (possible in a command's or a handler's output)
 * would make the whole batch's statement fail, again and again, holding back every outcome in it.
 */
function storableText(text: string | null): string | null {
  if (text === null) return null;
  // toWellFormed is in Node 20's V8; the ES2023 lib the project targets does not declare it.
  return (text.replace(/\u0000/g, '\uFFFD') as unknown as { toWellFormed(): string }).toWellFormed();
}

/**
 * Writes start records and outcomes, and creates the retry attempts of failed outcomes, in one statement: a batch
 * of changes commits together or not at all. Fencing: a start record applies only to a row still waiting with no
 * token; an outcome only to a row running under the same token, or still waiting with no token (its start never
 * went out on its own). Times come from the database clock: started_at is now() minus the time since the attempt
 * started, as the worker measured it when it sent the batch.
 */
export async function executionsRecord(
  pool: pg.Pool,
  input: { workerId: string; leaseMs: number; starts: StartRecord[]; outcomes: Outcome[] },
): Promise<RecordResult> {
  const { starts, outcomes } = input;
  if (starts.length === 0 && outcomes.length === 0)
    return { started: new Set(), recorded: [], rejected: [], retries: [] };
  const { rows } = await pool.query({
    name: 'executions_record',
    text: RECORD_SQL,
    values: [
      input.workerId,
      input.leaseMs,
      JSON.stringify(
        starts.map((s) => ({ id: s.id, token: s.token, elapsed_ms: s.elapsedMs, job_version: s.jobVersion ?? null })),
      ),
      JSON.stringify(
        outcomes.map((o) => ({
          id: o.id,
          token: o.token,
          status: o.status,
          exit_code: o.exitCode,
          output: storableText(o.output),
          error: storableText(o.error),
          duration_ms: o.durationMs,
          retry_delay_ms: o.retryDelayMs,
          worker_id: o.workerId,
          started_ago_ms: o.startedAgoMs ?? null,
          job_version: o.jobVersion ?? null,
        })),
      ),
    ],
  });
  const row = rows[0] as {
    started: string[];
    done: string[];
    retries: (Omit<CreatedRow, 'scheduled_for'> & { scheduled_for: string })[];
  };
  const started = new Set(row.started);
  const done = new Set(row.done);
  const retries = row.retries.map((r) => toCreated({ ...r, scheduled_for: new Date(r.scheduled_for) }));
  return {
    started,
    recorded: outcomes.filter((o) => done.has(o.id)),
    rejected: outcomes.filter((o) => !done.has(o.id)),
    retries,
  };
}

/** Outcomes alone (the reaper's writes). */
export async function executionsFinish(pool: pg.Pool, outcomes: Outcome[]): Promise<FinishResult> {
  const { recorded, rejected, retries } = await executionsRecord(pool, {
    workerId: '',
    leaseMs: 0,
    starts: [],
    outcomes,
  });
  return { recorded, rejected, retries };
}

/** Extends the leases of attempts still running under these tokens; returns their ids. */
export async function executionsHeartbeat(
  pool: pg.Pool,
  input: { workerId: string; leaseMs: number; claims: Claim[] },
): Promise<Set<string>> {
  if (input.claims.length === 0) return new Set();
  // Fenced by the tokens, so a second run (after a dead connection) extends the same leases again.
  const { rows } = await pool.query(
    idempotent({
      text: `UPDATE executions e SET lease_expires_at = now() + make_interval(secs => $1::double precision / 1000)
     FROM unnest($2::bigint[], $3::text[]) AS c(id, token)
     WHERE e.id = ANY($2::bigint[]) AND e.id = c.id AND e.status = 'running' AND e.lease_token = c.token
     RETURNING e.id`,
      values: [input.leaseMs, input.claims.map((c) => c.id), input.claims.map((c) => c.token)],
    }),
  );
  return new Set(rows.map((r) => r.id as string));
}

/**
 * Stores the output of attempts that ended without an outcome of their worker's (cancelled, replaced, lease lost).
 * Fenced like an outcome, and never over anything: the row must be final, hold this attempt's token (or none: it
 * was cancelled before its start was recorded) and have no output yet.
 */
export async function executionsKeepOutput(
  pool: pg.Pool,
  items: { id: string; token: string; output: string }[],
): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const { rows } = await pool.query(
    `WITH input AS (SELECT * FROM json_to_recordset($1::json) AS i(id bigint, token text, output text))
     UPDATE executions e SET output = i.output
     FROM input i
     WHERE e.id = ANY(ARRAY(SELECT id FROM input)) AND e.id = i.id
       AND e.status IN ('cancelled', 'failed', 'dead', 'skipped') AND e.output IS NULL
       AND (e.lease_token = i.token OR e.lease_token IS NULL)
     RETURNING e.id`,
    [JSON.stringify(items.map((i) => ({ id: i.id, token: i.token, output: storableText(i.output) })))],
  );
  return new Set(rows.map((r) => r.id as string));
}

/**
 * Gives attempts back as queued (same attempt, no retry used): a shutdown is not the job's failure. The delivery that
 * ends here is kept on the row (see migration 012), so a run that starts again is seen as a second delivery.
 */
export async function executionsRelease(pool: pg.Pool, claims: Claim[]): Promise<CreatedExecution[]> {
  if (claims.length === 0) return [];
  const { rows } = await pool.query(
    `UPDATE executions e
     SET status = 'queued', worker_id = NULL, lease_token = NULL, lease_expires_at = NULL, started_at = NULL,
         scheduled_for = least(e.scheduled_for, now()),
         deliveries = coalesce(e.deliveries, '[]'::jsonb) || jsonb_build_array(jsonb_build_object(
           'worker_id', e.worker_id, 'started_at', e.started_at, 'ended_at', now(), 'outcome', 'released'))
     FROM unnest($1::bigint[], $2::text[]) AS c(id, token)
     WHERE e.id = ANY($1::bigint[]) AND e.id = c.id AND e.status = 'running' AND e.lease_token = c.token
     RETURNING e.id, e.job_id, e.attempt, e.trigger, e.status, e.lane, e.priority, e.scheduled_for, e.flow_key`,
    [claims.map((c) => c.id), claims.map((c) => c.token)],
  );
  return rows.map(toCreated);
}

/**
 * Records a lost delivery on attempts still waiting with no start: their claim expired in the queue before a start
 * was written (the worker died or could not reach PostgreSQL), and they are about to be delivered again.
 */
export async function executionsDeliveryLost(pool: pg.Pool, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await pool.query(
    `UPDATE executions e
     SET deliveries = coalesce(e.deliveries, '[]'::jsonb) || jsonb_build_array(jsonb_build_object(
       'worker_id', NULL, 'started_at', NULL, 'ended_at', now(), 'outcome', 'lost'))
     WHERE e.id = ANY($1::bigint[]) AND e.status IN ('queued', 'retrying') AND e.lease_token IS NULL`,
    [ids],
  );
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
    backoff: toBackoff(r),
  }));
}

/** Waiting executions after `afterId`, in id order: the reconciler's page. */
export async function executionsWaitingPage(
  pool: pg.Pool,
  input: { afterId: string | null; limit: number },
): Promise<QueueItem[]> {
  const { rows } = await pool.query(
    `SELECT id, job_id, lane, priority, scheduled_for, flow_key FROM executions
     WHERE status IN ('queued', 'retrying') AND ($1::bigint IS NULL OR id > $1)
     ORDER BY id LIMIT $2`,
    [input.afterId, input.limit],
  );
  return rows.map(toQueueItem);
}

export async function executionsWaiting(pool: pg.Pool, ids: readonly string[]): Promise<WaitingExecution[]> {
  if (ids.length === 0) return [];
  const { rows } = await pool.query(
    `SELECT e.id, e.lane, e.priority, e.scheduled_for, e.job_id, e.flow_key, e.attempt, j.max_retries,
            j.backoff_base_ms, j.backoff_factor, j.backoff_max_ms, j.backoff_jitter
     FROM executions e JOIN jobs j ON j.id = e.job_id
     WHERE e.id = ANY($1::bigint[]) AND e.status IN ('queued', 'retrying') AND e.lease_token IS NULL`,
    [ids],
  );
  return rows.map((r) => ({
    ...toQueueItem(r),
    jobId: r.job_id,
    attempt: r.attempt,
    maxRetries: r.max_retries,
    backoff: toBackoff(r),
  }));
}
