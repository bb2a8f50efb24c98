/** @module execution-commands — SQL behind user commands on executions: trigger, bulk enqueue, cancel, replay. */
import type { AuditEntry, ChangedExecution, CreatedExecution, Execution, ExecutionStatus } from '@jobs/core';
import type pg from 'pg';
import { audited } from './audit';
import { isId } from './jobs';
import { countInMinutes } from './minutes';
import { CREATED_COLUMNS, EXECUTION_COLUMNS, flowKeySql, toCancelled, toCreated, toExecution } from './rows';

/**
 * A manual run. With an idempotency key, a repeated call returns the execution the first call created
 * (the unique (job_id, idempotency_key) index decides, so concurrent repeats also get one execution).
 */
export async function executionTrigger(
  pool: pg.Pool,
  input: {
    jobId: string;
    payload: unknown;
    idempotencyKey: string | null;
    traceparent?: string | null;
    audit?: AuditEntry;
  },
): Promise<{ execution: CreatedExecution; record: Execution; created: boolean; samePayload?: boolean } | null> {
  if (!isId(input.jobId)) return null;
  const payload = input.payload === null || input.payload === undefined ? null : JSON.stringify(input.payload);
  const a = input.audit;
  // The audit row is written by the same statement, only for a row actually inserted (a repeated key inserts none).
  const { rows } = await pool.query({
    name: 'execution_trigger',
    text: `WITH inserted AS (
       INSERT INTO executions (job_id, trigger, status, lane, priority, scheduled_for, payload, idempotency_key, flow_key, traceparent)
       SELECT id, 'manual', 'queued', lane, priority, now(), $2::jsonb, $3, ${flowKeySql('jobs', 'coalesce($2::jsonb, jobs.payload)')}, $7
       FROM jobs WHERE id = $1 AND deleted_at IS NULL
       ON CONFLICT (job_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING ${EXECUTION_COLUMNS}
     ), audited AS (
       ${TRIGGER_AUDIT_SQL.replaceAll('$ENTRY', '(SELECT $4::text AS key_name, $5::text AS request_id, $6::text AS source) i')}
       WHERE $4::text IS NOT NULL
     )
     SELECT * FROM inserted`,
    values: [
      input.jobId,
      payload,
      input.idempotencyKey,
      a?.keyName ?? null,
      a?.requestId ?? null,
      a?.source ?? null,
      input.traceparent ?? null,
    ],
  });
  if (rows[0]) return { execution: toCreated(rows[0]), record: toExecution(rows[0]), created: true };
  return input.idempotencyKey === null
    ? null
    : executionByIdempotencyKey(pool, { ...input, idempotencyKey: input.idempotencyKey });
}

/**
 * The audit rows of inserted triggers: `$ENTRY` is replaced by a relation `i` with key_name, request_id and source,
 * joined to `inserted` (a batch joins it by position).
 */
export const TRIGGER_AUDIT_SQL = `INSERT INTO audit_log (key_name, action, target, outcome, request_id, source, changes)
       SELECT i.key_name, 'job.trigger', 'job:' || ins.job_id, 'ok', i.request_id, i.source,
              jsonb_build_object('execution', jsonb_build_object('old', null, 'new', ins.id::text))
       FROM inserted ins, $ENTRY`;

/**
 * The execution an earlier trigger with this idempotency key created (null: none), and whether it was given the same
 * payload: jsonb equality, so key order and number spelling (1.0, 1) do not count as a difference.
 */
export async function executionByIdempotencyKey(
  pool: pg.Pool,
  input: { jobId: string; idempotencyKey: string; payload: unknown },
): Promise<{ execution: CreatedExecution; record: Execution; created: false; samePayload: boolean } | null> {
  const payload = input.payload === null || input.payload === undefined ? null : JSON.stringify(input.payload);
  const { rows } = await pool.query(
    `SELECT ${EXECUTION_COLUMNS}, payload IS NOT DISTINCT FROM $3::jsonb AS same_payload
     FROM executions WHERE job_id = $1 AND idempotency_key = $2`,
    [input.jobId, input.idempotencyKey, payload],
  );
  const row = rows[0];
  return row
    ? { execution: toCreated(row), record: toExecution(row), created: false, samePayload: row.same_payload }
    : null;
}

/** Many manual runs of one job in one statement (bulk enqueue). */
export async function executionsEnqueueMany(
  pool: pg.Pool,
  input: { jobId: string; payloads: unknown[] },
): Promise<CreatedExecution[]> {
  if (!isId(input.jobId) || input.payloads.length === 0) return [];
  const { rows } = await pool.query({
    name: 'executions_enqueue_many',
    text: `INSERT INTO executions (job_id, trigger, status, lane, priority, scheduled_for, payload, flow_key)
     SELECT j.id, 'manual', 'queued', j.lane, j.priority, now(), p.payload, ${flowKeySql('j', 'coalesce(p.payload, j.payload)')}
     FROM jobs j, unnest($2::jsonb[]) AS p(payload) WHERE j.id = $1 AND j.deleted_at IS NULL
     RETURNING ${CREATED_COLUMNS}`,
    values: [input.jobId, input.payloads.map((p) => (p === null || p === undefined ? null : JSON.stringify(p)))],
  });
  return rows.map(toCreated);
}

/** Cancels a live attempt. `changed` is null when it had already finished (status says how). */
export async function executionCancel(
  pool: pg.Pool,
  id: string,
  audit?: AuditEntry,
): Promise<{ changed: ChangedExecution | null; status: ExecutionStatus } | null> {
  if (!isId(id)) return null;
  const changedOnly = (result: Awaited<ReturnType<typeof cancel>>, entry: AuditEntry) =>
    result?.changed ? { ...entry, changes: { status: { old: result.changed.from, new: 'cancelled' } } } : null;
  const cancel = async (db: Pick<pg.Pool, 'query'>) => {
    const { rows } = await db.query(
      `WITH target AS (SELECT id, status FROM executions WHERE id = $1 FOR UPDATE),
     changed AS (
       UPDATE executions e SET status = 'cancelled', finished_at = now(), error = 'cancelled by request', lease_expires_at = NULL
       FROM target t WHERE e.id = t.id AND t.status IN ('queued', 'retrying', 'running')
       RETURNING e.id, e.job_id, e.attempt, e.lane, e.priority, e.scheduled_for, e.worker_id, t.status AS from_status
     ),
     counted AS (${countInMinutes('changed', "'cancelled'")})
     SELECT t.status, c.* FROM target t LEFT JOIN changed c ON true`,
      [id],
    );
    const r = rows[0];
    if (!r) return null;
    if (!r.id) return { changed: null, status: r.status as ExecutionStatus };
    return { status: 'cancelled' as const, changed: toCancelled(r) };
  };
  return audited(pool, audit, cancel, changedOnly);
}

/**
 * A dead or failed execution re-run as a new attempt chain (attempt 1, a fresh retry budget), once: the replayed row
 * records the replay, and a second replay creates nothing unless `force`. The source row is locked first, so a
 * concurrent replay waits, then sees `replayed_by` set (READ COMMITTED re-reads a row it waited for) and creates
 * nothing: concurrent replays make one chain. `replayedBy` is the row's replay before this call.
 */
export async function executionReplay(
  pool: pg.Pool,
  id: string,
  options: { force?: boolean; audit?: AuditEntry } = {},
): Promise<{ execution: CreatedExecution | null; status: ExecutionStatus; replayedBy: string | null } | null> {
  if (!isId(id)) return null;
  return audited(
    pool,
    options.audit,
    (db) => replay(db, id, options.force === true),
    (result, entry) =>
      result?.execution
        ? { ...entry, changes: { replayed_by: { old: result.replayedBy, new: result.execution.id } } }
        : null,
  );
}

async function replay(db: Pick<pg.Pool, 'query'>, id: string, force: boolean) {
  const { rows } = await db.query(
    `WITH source AS (
       SELECT e.id, e.job_id, e.status, e.lane, e.priority, e.payload, e.replayed_by,
              ${flowKeySql('j', 'coalesce(e.payload, j.payload)')} AS flow_key
       FROM executions e JOIN jobs j ON j.id = e.job_id AND j.deleted_at IS NULL WHERE e.id = $1
       FOR UPDATE OF e
     ),
     created AS (
       INSERT INTO executions (job_id, retry_of, attempt, trigger, status, lane, priority, scheduled_for, payload, flow_key)
       SELECT job_id, id, 1, 'replay', 'queued', lane, priority, now(), payload, flow_key FROM source
       WHERE status IN ('dead', 'failed') AND (replayed_by IS NULL OR $2)
       RETURNING ${CREATED_COLUMNS}
     ),
     marked AS (UPDATE executions e SET replayed_by = c.id FROM created c WHERE e.id = $1 RETURNING e.id)
     SELECT s.status AS source_status, s.replayed_by AS source_replayed_by, c.* FROM source s LEFT JOIN created c ON true`,
    [id, force],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    status: r.source_status as ExecutionStatus,
    replayedBy: (r.source_replayed_by ?? null) as string | null,
    execution: r.id ? toCreated(r) : null,
  };
}
