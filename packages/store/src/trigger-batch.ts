/**
 * @module trigger-batch — manual triggers that arrive together share one INSERT and one commit.
 *
 * Under concurrent load (an API serving many clients) each trigger on its own costs a round trip, a commit and a
 * socket write per request, which is most of the API's CPU on a small machine. Here a trigger that arrives while
 * `maxInFlight` statements are already running waits for one of them and then goes out with everything else that
 * arrived meanwhile, in one statement. Nothing waits for a timer: alone, a trigger goes out at once. Each caller is
 * still answered only after its row is committed, so an acknowledged trigger is as durable as before.
 *
 * A statement that fails (say, one payload PostgreSQL refuses) is retried one trigger at a time, so one bad input
 * fails only its own caller.
 */
import type { AuditEntry, CreatedExecution, Execution } from '@jobs/core';
import type pg from 'pg';
import { executionByIdempotencyKey, executionTrigger, TRIGGER_AUDIT_SQL } from './execution-commands';
import { isId } from './jobs';
import { EXECUTION_COLUMNS, flowKeySql, toCreated, toExecution, type CreatedRow, type ExecutionRow } from './rows';

/** A row the batch inserted, with the position of its trigger in the batch. */
type BatchRow = ExecutionRow & Pick<CreatedRow, 'flow_key'> & { ord: number };

export interface TriggerInput {
  jobId: string;
  payload: unknown;
  idempotencyKey: string | null;
  audit?: AuditEntry;
  traceparent?: string | null;
}
export type TriggerResult = {
  execution: CreatedExecution;
  record: Execution;
  created: boolean;
  samePayload?: boolean;
} | null;

interface Waiting {
  input: TriggerInput;
  resolve: (result: TriggerResult) => void;
  reject: (error: unknown) => void;
}

/**
 * Row ids are taken from the identity sequence up front so that every returned row maps back to its caller
 * (RETURNING has no access to the input row). A trigger whose idempotency key already exists inserts nothing
 * (ON CONFLICT DO NOTHING, also between two triggers of one batch) and is answered with the existing execution.
 */
const BATCH_SQL = `WITH input AS (
  SELECT x.ord, x.job_id, x.payload, x.idempotency_key, x.traceparent, x.key_name, x.request_id, x.source
  FROM json_to_recordset($1::json) AS x(ord int, job_id bigint, payload jsonb, idempotency_key text, traceparent text, key_name text, request_id text, source text)
), numbered AS (
  SELECT i.ord, nextval(pg_get_serial_sequence('executions', 'id')) AS id, j.id AS job_id, j.lane, j.priority,
         i.payload, i.idempotency_key, ${flowKeySql('j', 'coalesce(i.payload, j.payload)')} AS flow_key, i.traceparent
  FROM input i JOIN jobs j ON j.id = i.job_id AND j.deleted_at IS NULL
), inserted AS (
  INSERT INTO executions (id, job_id, trigger, status, lane, priority, scheduled_for, payload, idempotency_key, flow_key, traceparent)
  OVERRIDING SYSTEM VALUE
  SELECT id, job_id, 'manual', 'queued', lane, priority, now(), payload, idempotency_key, flow_key, traceparent FROM numbered ORDER BY ord
  ON CONFLICT (job_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING ${EXECUTION_COLUMNS}
), audited AS (
  ${TRIGGER_AUDIT_SQL.replaceAll('$ENTRY', 'numbered n JOIN input i ON i.ord = n.ord')}
  WHERE n.id = ins.id AND i.key_name IS NOT NULL
)
SELECT n.ord, ins.* FROM numbered n JOIN inserted ins ON ins.id = n.id`;

/**
 * @example
 *   const triggers = createTriggerBatcher(pool);
 *   const result = await triggers.trigger({ jobId: '42', payload: null, idempotencyKey: null });
 */
export function createTriggerBatcher(pool: pg.Pool, options: { maxInFlight?: number; maxBatch?: number } = {}) {
  const maxInFlight = options.maxInFlight ?? 2;
  const maxBatch = options.maxBatch ?? 200;
  let waiting: Waiting[] = [];
  let inFlight = 0;
  let scheduled = false;

  function kick(): void {
    if (scheduled || inFlight >= maxInFlight || waiting.length === 0) return;
    scheduled = true;
    // Triggers handed in during this turn of the event loop join the same statement.
    setImmediate(() => {
      scheduled = false;
      while (inFlight < maxInFlight && waiting.length > 0) {
        const batch = waiting.length <= maxBatch ? waiting : waiting.slice(0, maxBatch);
        waiting = waiting.length <= maxBatch ? [] : waiting.slice(maxBatch);
        inFlight++;
        void send(batch).finally(() => {
          inFlight--;
          kick();
        });
      }
    });
  }

  async function send(batch: Waiting[]): Promise<void> {
    if (batch.length === 1) return settle(batch[0]!, executionTrigger(pool, batch[0]!.input));
    let rows: BatchRow[];
    try {
      const entries = batch.map((w, ord) => ({
        ord,
        job_id: w.input.jobId,
        payload: w.input.payload ?? null,
        idempotency_key: w.input.idempotencyKey,
        key_name: w.input.audit?.keyName ?? null,
        request_id: w.input.audit?.requestId ?? null,
        source: w.input.audit?.source ?? null,
        traceparent: w.input.traceparent ?? null,
      }));
      ({ rows } = await pool.query<BatchRow>({
        name: 'execution_trigger_batch',
        text: BATCH_SQL,
        values: [JSON.stringify(entries)],
      }));
    } catch {
      // Isolate the failure: each trigger alone, each caller gets its own answer or error.
      await Promise.all(batch.map((w) => settle(w, executionTrigger(pool, w.input))));
      return;
    }
    const byOrd = new Map(rows.map((r) => [r.ord, r]));
    await Promise.all(
      batch.map((w, ord) => {
        const row = byOrd.get(ord);
        if (row)
          return settle(w, Promise.resolve({ execution: toCreated(row), record: toExecution(row), created: true }));
        // No row: the job is missing or deleted, or the key was used before (by an earlier trigger or this batch).
        const { jobId, idempotencyKey, payload } = w.input;
        return settle(
          w,
          idempotencyKey === null
            ? Promise.resolve(null)
            : executionByIdempotencyKey(pool, { jobId, idempotencyKey, payload }),
        );
      }),
    );
  }

  async function settle(w: Waiting, result: Promise<TriggerResult>): Promise<void> {
    try {
      w.resolve(await result);
    } catch (error) {
      w.reject(error);
    }
  }

  return {
    /** A manual run of one job; null when the job does not exist or is deleted. */
    trigger(input: TriggerInput): Promise<TriggerResult> {
      if (!isId(input.jobId)) return Promise.resolve(null);
      return new Promise<TriggerResult>((resolve, reject) => {
        waiting.push({ input, resolve, reject });
        kick();
      });
    },
  };
}
