/**
 * @module releases — what the deploy's migration step records, and what a process checks before it starts: the
 * release being deployed (workers of older releases retire once its workers run, see workers.ts) and the schema
 * version the database is at.
 */
import type pg from 'pg';
import { migrations } from './migrate';

/** The newest migration this build carries: the schema version its code needs. */
export function latestMigration(): number {
  return Math.max(0, ...migrations().map((m) => m.version));
}

/**
 * Records `release` as the newest release, at the schema version the database is at now. Recording a release
 * already recorded changes nothing (a retried deploy step), so it keeps its place in the order.
 * @example await recordRelease(pool, '2026-12-02T10:44:08.000Z') // { release: '2026-...', recorded: true }
 */
export async function recordRelease(pool: pg.Pool, release: string): Promise<{ release: string; recorded: boolean }> {
  const { rowCount } = await pool.query(
    `INSERT INTO releases (release, schema_version)
     SELECT $1, coalesce((SELECT max(version) FROM schema_migrations), 0)
     ON CONFLICT (release) DO NOTHING`,
    [release],
  );
  return { release, recorded: (rowCount ?? 0) > 0 };
}

/** The newest recorded release (null: none recorded yet). */
export async function currentRelease(pool: pg.Pool): Promise<string | null> {
  const { rows } = await pool.query(`SELECT release FROM releases ORDER BY seq DESC LIMIT 1`);
  return rows[0]?.release ?? null;
}

/** The newest migration applied to the pool's schema (0: none, not even the migrations table). */
export async function schemaVersion(pool: pg.Pool): Promise<number> {
  // Two statements: a statement naming a table that does not exist fails when parsed, whatever its CASE says.
  const exists = await pool.query(`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`);
  if (!exists.rows[0]?.present) return 0;
  const { rows } = await pool.query(`SELECT coalesce(max(version), 0) AS version FROM schema_migrations`);
  return Number(rows[0]?.version ?? 0);
}
