/** @module jobs — all SQL on the jobs table: insert, read, list, status changes, delete, and the tick's claim. */
import {
  ConflictError,
  InvalidInputError,
  NO_LIMITS,
  parseJsonPointer,
  type AuditEntry,
  type ChangedExecution,
  type FirePlan,
  type FlowLimits,
  type Job,
  type JobSpec,
  type MaterialiseResult,
} from '@jobs/core';
import type pg from 'pg';
import { audited, auditInsert, type Queryable } from './audit';
import { countInMinutes } from './minutes';
import { transaction } from './transaction';
import { CREATED_COLUMNS, JOB_COLUMNS, flowKeySql, toCancelled, toCreated, toJob } from './rows';

export interface JobListFilter {
  status?: Job['status'];
  /** Keyset cursor: jobs with id below this (the list is newest first). */
  before?: string;
  limit: number;
}

/**
 * The jobs columns of a job's limits, in the order max_concurrency, concurrency_key, concurrency_key_path,
 * max_concurrency_per_key, rate_limit, rate_period_ms, rate_per_key. The pointer is validated by the API.
 */
function limitColumns(limits: FlowLimits): unknown[] {
  const pointer = limits.concurrencyKey;
  const path = pointer === null ? null : parseJsonPointer(pointer);
  if (path && !path.ok) throw new InvalidInputError(`concurrency_key: ${path.error}`, 'concurrency_key');
  return [
    limits.maxConcurrency,
    pointer,
    path?.ok ? path.path : null,
    limits.maxConcurrencyPerKey,
    limits.rateLimit?.limit ?? null,
    limits.rateLimit?.periodMs ?? null,
    limits.rateLimit?.perKey ?? false,
  ];
}

/**
 * The jobs columns a definition sets, with their values: one list for INSERT and UPDATE, so a new field of the
 * definition is written by both.
 */
export function specColumns(spec: JobSpec): { names: string[]; values: unknown[] } {
  const columns: [string, unknown][] = [
    ['name', spec.name],
    ['cron_expr', spec.cronExpr],
    ['timezone', spec.timezone],
    ['run_at', spec.runAt],
    ['command', spec.command],
    ['handler', spec.handler],
    ['http', spec.http ? JSON.stringify(spec.http) : null],
    ['lambda', spec.lambda ? JSON.stringify(spec.lambda) : null],
    ['payload', JSON.stringify(spec.payload ?? null)],
    ['env', spec.env && Object.keys(spec.env).length > 0 ? JSON.stringify(spec.env) : null],
    ['status', spec.status ?? 'active'],
    ['max_retries', spec.maxRetries],
    ['backoff_base_ms', spec.backoff.baseMs],
    ['backoff_factor', spec.backoff.factor],
    ['backoff_max_ms', spec.backoff.maxMs],
    ['backoff_jitter', spec.backoff.jitter],
    ['timeout_ms', spec.timeoutMs],
    ['overlap', spec.overlap],
    ['misfire', spec.misfire],
    ['catch_up_max', spec.catchUpMax],
    ['misfire_deadline_ms', spec.misfireDeadlineMs],
    ['retention_days', spec.retentionDays ?? null],
    ['lane', spec.lane],
    ['priority', spec.priority],
    ['managed_by', spec.managedBy ?? null],
  ];
  const limits = limitColumns(spec.limits ?? NO_LIMITS);
  const limitNames = [
    'max_concurrency',
    'concurrency_key',
    'concurrency_key_path',
    'max_concurrency_per_key',
    'rate_limit',
    'rate_period_ms',
    'rate_per_key',
  ];
  limitNames.forEach((name, i) => columns.push([name, limits[i]]));
  return { names: columns.map((c) => c[0]), values: columns.map((c) => c[1]) };
}

/**
 * Inserts a job and its version 1 (by `actor`) in one statement. `ifAbsent`: a live job with the name already
 * there gives null instead of a ConflictError (a concurrent insert of the name waits for the other, then yields).
 */
export async function jobInsert(
  pool: pg.Pool,
  spec: JobSpec & { nextRunAt: Date | null; actor?: string },
  audit?: AuditEntry,
): Promise<Job> {
  return (await jobInsertIfAbsentOr(pool, spec, false, audit))!;
}

export function jobInsertIfAbsent(
  pool: pg.Pool,
  spec: JobSpec & { nextRunAt: Date | null; actor: string },
  audit?: AuditEntry,
): Promise<Job | null> {
  return jobInsertIfAbsentOr(pool, spec, true, audit);
}

/** The insert, with its audit row (naming the new id) in the same transaction; none when nothing was inserted. */
function jobInsertIfAbsentOr(
  pool: pg.Pool,
  spec: JobSpec & { nextRunAt: Date | null; actor?: string },
  ifAbsent: boolean,
  audit?: AuditEntry,
) {
  return audited(
    pool,
    audit,
    (db) => insertJob(db, spec, ifAbsent),
    (job, entry) => (job ? { ...entry, target: `job:${job.id}` } : null),
  );
}

async function insertJob(
  pool: Queryable,
  spec: JobSpec & { nextRunAt: Date | null; actor?: string },
  ifAbsent: boolean,
): Promise<Job | null> {
  const { names, values } = specColumns(spec);
  const params = values.map((_, i) => `$${i + 3}`).join(', ');
  const conflict = ifAbsent ? 'ON CONFLICT (name) WHERE deleted_at IS NULL DO NOTHING' : '';
  try {
    const { rows } = await pool.query(
      `WITH inserted AS (
         INSERT INTO jobs (next_run_at, ${names.join(', ')}) VALUES ($1, ${params}) ${conflict} RETURNING *
       ),
       versioned AS (
         INSERT INTO job_versions (job_id, version, actor, changes) SELECT id, 1, $2, '[]'::jsonb FROM inserted
       )
       SELECT ${JOB_COLUMNS} FROM inserted jobs`,
      [spec.nextRunAt, spec.actor ?? 'api', ...values],
    );
    return rows[0] ? toJob(rows[0]) : null;
  } catch (error) {
    if ((error as { code?: string }).code === '23505') {
      throw new ConflictError(`a job named ${JSON.stringify(spec.name)} already exists`);
    }
    throw error;
  }
}

/** The live job with this name (names are stored trimmed and NFC-normalised). */
export async function jobGetByName(pool: pg.Pool, name: string): Promise<Job | null> {
  const { rows } = await pool.query(`SELECT ${JOB_COLUMNS} FROM jobs WHERE name = $1 AND deleted_at IS NULL`, [name]);
  return rows[0] ? toJob(rows[0]) : null;
}

export async function jobGet(pool: pg.Pool, id: string): Promise<Job | null> {
  if (!isId(id)) return null;
  const { rows } = await pool.query(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1 AND deleted_at IS NULL`, [id]);
  return rows[0] ? toJob(rows[0]) : null;
}

/**
 * Names of the jobs among `ids`, in one statement: deleted ones included (their attempts may still be counted
 * somewhere), unless `live`.
 */
export async function jobNames(
  pool: pg.Pool,
  ids: readonly string[],
  options: { live?: boolean } = {},
): Promise<Map<string, string>> {
  const valid = [...new Set(ids.filter(isId))];
  if (valid.length === 0) return new Map();
  const { rows } = await pool.query(
    `SELECT id, name FROM jobs WHERE id = ANY($1::bigint[])${options.live ? ' AND deleted_at IS NULL' : ''}`,
    [valid],
  );
  return new Map(rows.map((r) => [r.id as string, r.name as string]));
}

/** Ids and names of the newest live jobs (a filter's choices): no per-job read of the history, unlike jobList. */
export async function jobChoices(pool: pg.Pool, limit: number): Promise<{ id: string; name: string }[]> {
  const { rows } = await pool.query(`SELECT id, name FROM jobs WHERE deleted_at IS NULL ORDER BY id DESC LIMIT $1`, [
    limit,
  ]);
  return rows.map((r) => ({ id: r.id as string, name: r.name as string }));
}

/** Newest first, keyset-paginated by id so pages stay stable while jobs are added. */
export async function jobList(pool: pg.Pool, filter: JobListFilter): Promise<Job[]> {
  const { rows } = await pool.query(
    `SELECT ${JOB_COLUMNS} FROM jobs
     WHERE deleted_at IS NULL AND ($1::text IS NULL OR status = $1) AND ($2::bigint IS NULL OR id < $2)
     ORDER BY id DESC LIMIT $3`,
    [filter.status ?? null, filter.before ?? null, filter.limit],
  );
  return rows.map(toJob);
}

/**
 * Pauses or resumes. Pausing also cancels the scheduled runs already materialised ahead (queued cron/once rows),
 * since "paused" means nothing new starts; manual runs and retries in flight are left alone.
 */
export async function jobSetStatus(
  pool: pg.Pool,
  input: { id: string; status: Job['status']; nextRunAt: Date | null },
  audit?: AuditEntry,
): Promise<{ job: Job; cancelled: ChangedExecution[] } | null> {
  if (!isId(input.id)) return null;
  return transaction(pool, async (client) => {
    const updated = await client.query(
      `WITH old AS (SELECT id AS old_id, status AS old_status FROM jobs WHERE id = $1 AND deleted_at IS NULL FOR UPDATE)
       UPDATE jobs SET status = $2, next_run_at = $3, updated_at = now()
       FROM old WHERE jobs.id = old.old_id RETURNING ${JOB_COLUMNS}, old.old_status`,
      [input.id, input.status, input.nextRunAt],
    );
    if (updated.rowCount === 0) return null;
    let cancelled: ChangedExecution[] = [];
    if (input.status === 'paused') {
      cancelled = await cancelLive(client, input.id, `trigger IN ('cron', 'once') AND status = 'queued'`, 'job paused');
    }
    if (audit)
      await auditInsert(client, {
        ...audit,
        changes: { status: { old: updated.rows[0].old_status, new: input.status } },
      });
    return { job: toJob(updated.rows[0]), cancelled };
  });
}

/** Soft delete: no further runs, live executions cancelled (running ones are killed by their worker), history kept. */
export async function jobDelete(
  pool: pg.Pool,
  id: string,
  audit?: AuditEntry,
): Promise<{ cancelled: ChangedExecution[] } | null> {
  if (!isId(id)) return null;
  return transaction(pool, async (client) => {
    const deleted = await client.query(
      `UPDATE jobs SET deleted_at = now(), next_run_at = NULL, status = 'paused', updated_at = now()
       WHERE id = $1 AND deleted_at IS NULL`,
      [id],
    );
    if (deleted.rowCount === 0) return null;
    const cancelled = await cancelLive(client, id, `status IN ('queued', 'retrying', 'running')`, 'job deleted');
    if (audit) await auditInsert(client, audit);
    return { cancelled };
  });
}

/** Cancels a job's executions matching `where` (a constant fragment, never user input; `$3...` are `extra`). */
export async function cancelLive(
  client: pg.PoolClient,
  jobId: string,
  where: string,
  reason: string,
  extra: unknown[] = [],
): Promise<ChangedExecution[]> {
  const { rows } = await client.query(
    `WITH target AS (
       SELECT id, status FROM executions WHERE job_id = $1 AND ${where} ORDER BY id FOR UPDATE
     ),
     changed AS (
       UPDATE executions e SET status = 'cancelled', finished_at = now(), error = $2, lease_expires_at = NULL
       FROM target t WHERE e.id = t.id
       RETURNING e.id, e.job_id, e.attempt, e.lane, e.priority, e.scheduled_for, e.worker_id, t.status AS from_status
     ),
     counted AS (${countInMinutes('changed', "'cancelled'")})
     SELECT * FROM changed`,
    [jobId, reason, ...extra],
  );
  return rows.map(toCancelled);
}

/**
 * The tick's transaction. SKIP LOCKED lets concurrent ticks split the due jobs instead of waiting on each other;
 * the unique (job_id, scheduled_for) index makes a fire time that two ticks both planned land once.
 */
export async function jobsMaterialiseDue(
  pool: pg.Pool,
  input: { horizon: Date; limit: number; plan: (job: Job) => FirePlan },
): Promise<MaterialiseResult> {
  return transaction(pool, async (client) => {
    const due = await client.query(
      `SELECT ${JOB_COLUMNS} FROM jobs
       WHERE status = 'active' AND deleted_at IS NULL AND next_run_at IS NOT NULL AND next_run_at <= $1
       ORDER BY next_run_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [input.horizon, input.limit],
    );
    if (due.rows.length === 0) return { jobs: 0, created: [], droppedMisfires: 0 };
    const jobs = due.rows.map(toJob);
    const fireJobIds: string[] = [];
    const fireTimes: Date[] = [];
    const fireTriggers: string[] = [];
    const nextIds: string[] = [];
    const nextTimes: (Date | null)[] = [];
    let droppedMisfires = 0;
    for (const job of jobs) {
      const plan = input.plan(job);
      droppedMisfires += plan.droppedMisfires;
      for (const fire of plan.fires) {
        fireJobIds.push(job.id);
        fireTimes.push(fire.scheduledFor);
        fireTriggers.push(job.cronExpr ? 'cron' : 'once');
      }
      nextIds.push(job.id);
      nextTimes.push(plan.nextRunAt);
    }
    let created: MaterialiseResult['created'] = [];
    if (fireJobIds.length > 0) {
      const inserted = await client.query(
        `INSERT INTO executions (job_id, trigger, status, lane, priority, scheduled_for, flow_key)
         SELECT f.job_id, f.trigger, 'queued', j.lane, j.priority, f.scheduled_for, ${flowKeySql('j', 'j.payload')}
         FROM unnest($1::bigint[], $2::timestamptz[], $3::text[]) AS f(job_id, scheduled_for, trigger)
         JOIN jobs j ON j.id = f.job_id
         ON CONFLICT (job_id, scheduled_for) WHERE trigger IN ('cron', 'once') AND status <> 'cancelled' DO NOTHING
         RETURNING ${CREATED_COLUMNS}`,
        [fireJobIds, fireTimes, fireTriggers],
      );
      created = inserted.rows.map(toCreated);
    }
    await client.query(
      `UPDATE jobs SET next_run_at = n.next_run_at
       FROM unnest($1::bigint[], $2::timestamptz[]) AS n(id, next_run_at) WHERE jobs.id = n.id`,
      [nextIds, nextTimes],
    );
    return { jobs: jobs.length, created, droppedMisfires };
  });
}

/** Ids are positive bigints; anything else cannot name a row (and must not reach a ::bigint cast as an error). */
export function isId(id: string): boolean {
  return /^[1-9][0-9]{0,17}$/.test(id);
}
