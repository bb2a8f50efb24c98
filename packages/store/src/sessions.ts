/**
 * @module sessions — all SQL on dashboard_sessions and sign_in_failures: a session is a row, found by the SHA-256 of
 * its cookie token, so ending it (sign-out) ends every copy of the cookie; and the failed sign-ins per source address
 * in the current minute, which the sign-in limit reads.
 */
import type { AuditEntry } from '@jobs/core';
import type pg from 'pg';
import { auditInsert } from './audit';
import { transaction } from './transaction';

export interface SessionRow {
  tokenHash: Buffer;
  keyName: string;
  keyFingerprint: Buffer;
  source: string | null;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
}

const COLUMNS = 'token_hash, key_name, key_fingerprint, source, created_at, last_seen_at, expires_at';

/** A sessions row. */
interface SessionDbRow {
  token_hash: Buffer;
  key_name: string;
  key_fingerprint: Buffer;
  source: string | null;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
}

const toSession = (r: SessionDbRow): SessionRow => ({
  tokenHash: r.token_hash,
  keyName: r.key_name,
  keyFingerprint: r.key_fingerprint,
  source: r.source,
  createdAt: r.created_at,
  lastSeenAt: r.last_seen_at,
  expiresAt: r.expires_at,
});

/** A new session and its sign-in audit row, in one transaction. */
export async function sessionInsert(
  pool: pg.Pool,
  input: { tokenHash: Buffer; keyName: string; keyFingerprint: Buffer; source: string | null; expiresAt: Date },
  audit: AuditEntry,
): Promise<void> {
  await transaction(pool, async (client) => {
    await client.query(
      `INSERT INTO dashboard_sessions (token_hash, key_name, key_fingerprint, source, expires_at) VALUES ($1, $2, $3, $4, $5)`,
      [input.tokenHash, input.keyName, input.keyFingerprint, input.source, input.expiresAt],
    );
    await auditInsert(client, audit);
  });
}

/**
 * The live session with this token hash (not ended, not expired at `now`, the app's clock), or null. `last_seen_at`
 * is refreshed at most once a minute, so browsing the dashboard is not a write per page.
 */
export async function sessionGet(pool: pg.Pool, tokenHash: Buffer, now: Date): Promise<SessionRow | null> {
  const { rows } = await pool.query(
    `WITH s AS (SELECT ${COLUMNS} FROM dashboard_sessions WHERE token_hash = $1 AND ended_at IS NULL AND expires_at > $2),
     touched AS (UPDATE dashboard_sessions d SET last_seen_at = now() FROM s
                 WHERE d.token_hash = s.token_hash AND s.last_seen_at < now() - interval '1 minute')
     SELECT * FROM s`,
    [tokenHash, now],
  );
  return rows[0] ? toSession(rows[0]) : null;
}

/** Ends a session (sign-out, or its key is no longer configured); the audit row, if given, commits with it. */
export async function sessionEnd(pool: pg.Pool, tokenHash: Buffer, audit?: AuditEntry): Promise<boolean> {
  return transaction(pool, async (client) => {
    const { rowCount } = await client.query(
      `UPDATE dashboard_sessions SET ended_at = now() WHERE token_hash = $1 AND ended_at IS NULL`,
      [tokenHash],
    );
    if (rowCount && audit) await auditInsert(client, audit);
    return (rowCount ?? 0) > 0;
  });
}

/** Live sessions made with one of these key fingerprints (the configured keys), newest first. */
export async function sessionListLive(
  pool: pg.Pool,
  input: { fingerprints: Buffer[]; now: Date; limit: number },
): Promise<SessionRow[]> {
  const { rows } = await pool.query(
    `SELECT ${COLUMNS} FROM dashboard_sessions
     WHERE ended_at IS NULL AND expires_at > $2 AND key_fingerprint = ANY($1::bytea[])
     ORDER BY created_at DESC LIMIT $3`,
    [input.fingerprints, input.now, input.limit],
  );
  return rows.map(toSession);
}

/** Deletes up to `limit` sessions that ended or expired more than `olderThanMs` ago. */
export async function sessionsPrune(pool: pg.Pool, input: { olderThanMs: number; limit: number }): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM dashboard_sessions WHERE token_hash IN (
       SELECT token_hash FROM dashboard_sessions
       WHERE coalesce(ended_at, expires_at) < now() - make_interval(secs => $1::double precision / 1000) LIMIT $2)`,
    [input.olderThanMs, input.limit],
  );
  await pool.query(
    `DELETE FROM sign_in_failures WHERE window_start < now() - make_interval(secs => $1::double precision / 1000)`,
    [input.olderThanMs],
  );
  return rowCount ?? 0;
}

/** Failed sign-ins from `source` in its current window, and when that window closes. */
export async function signInFailures(
  pool: pg.Pool,
  input: { source: string; windowMs: number },
): Promise<{ failures: number; resetsInMs: number }> {
  const { rows } = await pool.query(
    `SELECT failures, greatest(0, extract(epoch FROM window_start + make_interval(secs => $2::double precision / 1000) - now()) * 1000)::float8 AS resets_in_ms
     FROM sign_in_failures WHERE source = $1 AND window_start > now() - make_interval(secs => $2::double precision / 1000)`,
    [input.source, input.windowMs],
  );
  return rows[0] ? { failures: rows[0].failures, resetsInMs: rows[0].resets_in_ms } : { failures: 0, resetsInMs: 0 };
}

/** Counts one failed sign-in from `source` (a new window when the last one closed), with its audit row. */
export async function signInFailed(
  pool: pg.Pool,
  input: { source: string; windowMs: number },
  audit: AuditEntry,
): Promise<void> {
  await transaction(pool, async (client) => {
    await client.query(
      `INSERT INTO sign_in_failures (source, window_start, failures) VALUES ($1, now(), 1)
       ON CONFLICT (source) DO UPDATE SET
         failures = CASE WHEN sign_in_failures.window_start > now() - make_interval(secs => $2::double precision / 1000)
                         THEN sign_in_failures.failures + 1 ELSE 1 END,
         window_start = CASE WHEN sign_in_failures.window_start > now() - make_interval(secs => $2::double precision / 1000)
                             THEN sign_in_failures.window_start ELSE now() END`,
      [input.source, input.windowMs],
    );
    await auditInsert(client, audit);
  });
}
