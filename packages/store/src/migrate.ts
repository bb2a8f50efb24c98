/**
 * @module migrate — applies the numbered, forward-only migrations under an advisory lock, so any number of
 * processes can start at once: one applies, the others wait and then find nothing to do.
 */
import type pg from 'pg';
import { MIGRATIONS } from './migrations.generated';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The bundled migrations in order, parsed from `NNN_name.sql` file names. */
export function migrations(): Migration[] {
  return Object.entries(MIGRATIONS)
    .map(([file, sql]) => {
      const match = /^(\d+)_(.+)\.sql$/.exec(file);
      if (!match) throw new Error(`migration file name must be NNN_name.sql: ${file}`);
      return { version: Number(match[1]), name: match[2]!, sql };
    })
    .sort((a, b) => a.version - b.version);
}

/**
 * Applies pending migrations to the schema the pool's connections use; returns the versions applied.
 * @example await migrate(pool)
 */
export async function migrate(pool: pg.Pool): Promise<number[]> {
  const client = await pool.connect();
  try {
    // Keyed by schema, so isolated test schemas migrate in parallel while replicas of one deployment serialise.
    await client.query(`SELECT pg_advisory_lock(hashtext('jobs-scheduler-migrate:' || current_schema()))`);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const done = new Set(
        (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version),
      );
      const applied: number[] = [];
      for (const m of migrations()) {
        if (done.has(m.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw new Error(`migration ${m.version}_${m.name} failed: ${(error as Error).message}`);
        }
        applied.push(m.version);
      }
      return applied;
    } finally {
      await client.query(`SELECT pg_advisory_unlock(hashtext('jobs-scheduler-migrate:' || current_schema()))`);
    }
  } finally {
    client.release();
  }
}
