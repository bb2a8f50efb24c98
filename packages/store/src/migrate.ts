/**
 * @module migrate — applies the numbered, forward-only migrations under an advisory lock, so any number of
 * processes can start at once: one applies, the others wait and then find nothing to do.
 */
import type pg from 'pg';
import { MIGRATIONS } from './migrations.generated';
import { inTransaction, withClient } from './transaction';

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
 * Each migration runs in its own transaction holding a transaction-scoped advisory lock (keyed by schema), and
 * re-checks inside it whether another process applied that version meanwhile. A transaction-scoped lock, unlike a
 * session lock held across transactions, stays correct behind a connection pooler such as RDS Proxy.
 * @example await migrate(pool)
 */
export async function migrate(pool: pg.Pool): Promise<number[]> {
  return withClient(pool, async (client) => {
    const lock = `SELECT pg_advisory_xact_lock(hashtext('jobs-scheduler-migrate:' || current_schema()))`;
    const applied: number[] = [];
    await inTransaction(client, async () => {
      await client.query(lock);
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    });
    for (const m of migrations()) {
      await inTransaction(client, async () => {
        await client.query(lock);
        const done = await client.query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version]);
        if (done.rowCount) return;
        try {
          await client.query(m.sql);
        } catch (error) {
          throw new Error(`migration ${m.version}_${m.name} failed: ${(error as Error).message}`);
        }
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
        applied.push(m.version);
      });
    }
    return applied;
  });
}
