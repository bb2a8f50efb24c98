/**
 * @module started — the statement that marks claimed attempts running and reads each with its job's definition, and
 * its row (shared by the plain start in executions.ts and the overlap-checked one in overlap.ts).
 */
import type { StartedExecution } from '@jobs/core';
import { toBackoff, type BackoffRow } from './rows';

/**
 * Whether the statements that hand attempts to a worker read `executions.traceparent`: only where tracing is on
 * (`createStore`'s `traceparent`); with it off, an attempt's row is read without it and runs with no parent.
 */
export interface TraceRead {
  traceparent: boolean;
}

const STARTED_COLUMNS = (
  read: TraceRead,
) => `e.id, e.token, e.job_id, e.attempt, coalesce(e.root_id, e.id) AS root_id, e.trigger, e.lane,
  e.priority, e.scheduled_for, coalesce(e.payload, j.payload) AS payload, j.command, j.handler, j.http, j.lambda, j.env, j.timeout_ms,
  j.max_retries, j.backoff_base_ms, j.backoff_factor, j.backoff_max_ms, j.backoff_jitter, j.overlap, e.flow_key,
  j.version AS job_version, j.timezone, e.delivery${read.traceparent ? ', e.traceparent' : ''}`;

/** A row of STARTED_COLUMNS: the execution joined with its job's definition. */
export interface StartedRow extends BackoffRow {
  id: string;
  token: string;
  job_id: string;
  attempt: number;
  root_id: string;
  trigger: StartedExecution['trigger'];
  lane: StartedExecution['lane'];
  priority: number;
  scheduled_for: Date;
  payload: unknown;
  command: string | null;
  handler: string | null;
  http: StartedExecution['http'] | null;
  lambda: StartedExecution['lambda'] | null;
  env?: StartedExecution['env'];
  timeout_ms: number;
  max_retries: number;
  overlap: StartedExecution['overlap'];
  flow_key: string | null;
  job_version: number;
  timezone: string;
  delivery: number;
  traceparent?: string | null;
}

export function toStarted(r: StartedRow): StartedExecution {
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
    http: r.http ?? null,
    lambda: r.lambda ?? null,
    env: r.env ?? null,
    timeoutMs: r.timeout_ms,
    maxRetries: r.max_retries,
    backoff: toBackoff(r),
    overlap: r.overlap,
    flowKey: r.flow_key,
    jobVersion: r.job_version,
    timezone: r.timezone,
    delivery: r.delivery,
    traceparent: r.traceparent ?? null,
  };
}

/** SQL for the number of the delivery a start of execution row `e` begins (see migration 012). */
export const DELIVERY_SQL = (e: string) => `coalesce(jsonb_array_length(${e}.deliveries), 0) + 1`;

/**
 * SQL that marks claimed rows running under their lease tokens; `$1` worker, `$2` lease ms, `$3` ids, `$4` tokens.
 * The job's definition is joined after the UPDATE, and the overlap check is a scalar subquery (never pulled up into
 * a join), so the UPDATE itself can only be planned as primary-key lookups.
 */
export const START_SQL = (overlapOnly: 'allow' | null, read: TraceRead) => `
  WITH started AS (
    UPDATE executions e
    SET status = 'running', worker_id = $1, lease_token = c.token, started_at = now(),
        job_version = (SELECT j.version FROM jobs j WHERE j.id = e.job_id),
        lease_expires_at = now() + make_interval(secs => $2::double precision / 1000)
    FROM unnest($3::bigint[], $4::text[]) AS c(id, token)
    WHERE e.id = ANY($3::bigint[]) AND e.id = c.id AND e.status IN ('queued', 'retrying')
      ${overlapOnly ? `AND (SELECT j.overlap FROM jobs j WHERE j.id = e.job_id) = '${overlapOnly}'` : ''}
    RETURNING e.id, c.token, e.job_id, e.attempt, e.root_id, e.trigger, e.lane, e.priority, e.scheduled_for, e.payload,
              e.flow_key, ${DELIVERY_SQL('e')} AS delivery${read.traceparent ? ', e.traceparent' : ''}
  )
  SELECT ${STARTED_COLUMNS(read)} FROM started e JOIN jobs j ON j.id = e.job_id`;
