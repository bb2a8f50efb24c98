/**
 * @module audit — all SQL on audit_log: the row a change writes in its own transaction, the admin's list, retention.
 */
import { maskSecrets, type AuditEntry } from '@jobs/core';
import type pg from 'pg';
import { transaction } from './transaction';

/** A pool or a client inside a transaction: what a single statement needs. */
export type Queryable = Pick<pg.Pool, 'query'>;

export interface AuditRow extends AuditEntry {
  id: string;
  at: Date;
}

export interface AuditListFilter {
  keyName?: string;
  action?: string;
  target?: string;
  outcome?: 'ok' | 'refused';
  /** Keyset cursor: rows with id below this (the list is newest first). */
  before?: string;
  limit: number;
}

/** Writes one audit row; changes are masked here, so no caller can forget it. */
export async function auditInsert(db: Queryable, entry: AuditEntry): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (key_name, action, target, outcome, request_id, source, changes) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)`,
    [
      entry.keyName,
      entry.action,
      entry.target,
      entry.outcome,
      entry.requestId,
      entry.source,
      entry.changes === null ? null : JSON.stringify(maskSecrets(entry.changes)),
    ],
  );
}

/**
 * Runs `work` and, when `audit` is given, writes the entry `entryOf` makes of its result in the same transaction
 * (none when it returns null: nothing changed). A failed insert of the audit row rolls the change back.
 * @example await audited(pool, audit, (db) => db.query(...), (result) => result ? audit : null)
 */
export function audited<T>(
  pool: pg.Pool,
  audit: AuditEntry | undefined,
  work: (db: Queryable) => Promise<T>,
  entryOf: (result: T, audit: AuditEntry) => AuditEntry | null,
): Promise<T> {
  if (!audit) return work(pool);
  return transaction(pool, async (client) => {
    const result = await work(client);
    const entry = entryOf(result, audit);
    if (entry) await auditInsert(client, entry);
    return result;
  });
}

export async function auditList(pool: pg.Pool, filter: AuditListFilter): Promise<AuditRow[]> {
  const { rows } = await pool.query(
    // `id` as it is (pg hands a bigint over as a string): an `id::text` output column named id would be what ORDER BY
    // id sorts, as text, and the newest rows would sort below older ones of fewer digits.
    `SELECT id, at, key_name, action, target, outcome, request_id, source, changes FROM audit_log
     WHERE ($1::text IS NULL OR key_name = $1) AND ($2::text IS NULL OR action = $2) AND ($3::text IS NULL OR target = $3)
       AND ($4::bigint IS NULL OR id < $4) AND ($6::text IS NULL OR outcome = $6)
     ORDER BY id DESC LIMIT $5`,
    [
      filter.keyName ?? null,
      filter.action ?? null,
      filter.target ?? null,
      filter.before ?? null,
      filter.limit,
      filter.outcome ?? null,
    ],
  );
  return rows.map((r) => ({
    id: r.id,
    at: r.at,
    keyName: r.key_name,
    action: r.action,
    target: r.target,
    outcome: r.outcome,
    requestId: r.request_id,
    source: r.source,
    changes: r.changes,
  }));
}

/** Deletes at most `limit` rows older than `olderThanMs`, oldest first; returns how many (a pass repeats while full). */
export async function auditPrune(pool: pg.Pool, input: { olderThanMs: number; limit: number }): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM audit_log WHERE id IN (
       SELECT id FROM audit_log WHERE at < now() - make_interval(secs => $1::double precision / 1000) ORDER BY at LIMIT $2)`,
    [input.olderThanMs, input.limit],
  );
  return rowCount ?? 0;
}
