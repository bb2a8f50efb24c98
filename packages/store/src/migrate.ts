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

export interface MigrateOptions {
  /**
   * Longest a DDL statement waits for a table lock (`lock_timeout`). A DDL queued behind a long transaction would
   * otherwise block every later query of that table while it waits; this way it gives up, and the migration is tried
   * again after a pause (`lockRetries` times), then fails.
   */
  lockTimeoutMs?: number;
  lockRetries?: number;
  /**
   * The whole run's budget: each statement may take what is left of it (`statement_timeout`, and the client's own
   * wait), instead of the runtime's query timeout, which a long step (an index on a big table) would outlast.
   */
  budgetMs?: number;
  /** The migrations to apply (default: the bundled ones); tests give their own. */
  migrations?: Migration[];
  /** Told of each retry after a lock timeout. */
  onRetry?: (event: { version: number; name: string; attempt: number; err: string }) => void;
}

/** SQLSTATE lock_not_available: the lock timeout fired. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Applies pending migrations to the schema the pool's connections use; returns the versions applied.
 * Each migration runs in its own transaction holding a transaction-scoped advisory lock (keyed by schema), and
 * re-checks inside it whether another process applied that version meanwhile. A transaction-scoped lock, unlike a
 * session lock held across transactions, stays correct behind a connection pooler such as RDS Proxy. Statements run
 * with a lock timeout and within the run's budget (MigrateOptions).
 * @example await migrate(pool, { lockTimeoutMs: 5000, budgetMs: 840_000 })
 */
export async function migrate(pool: pg.Pool, options: MigrateOptions = {}): Promise<number[]> {
  const lockTimeoutMs = options.lockTimeoutMs ?? 5_000;
  const lockRetries = options.lockRetries ?? 5;
  const deadline = Date.now() + (options.budgetMs ?? 15 * 60_000);
  return withClient(pool, async (client) => {
    const lock = `SELECT pg_advisory_xact_lock(hashtext('jobs-scheduler-migrate:' || current_schema()))`;
    const applied: number[] = [];
    /** Runs `sql` with what is left of the budget, on the server and in the client. */
    const run = (sql: string, values?: unknown[]) => {
      const leftMs = deadline - Date.now();
      if (leftMs <= 0) throw new Error('the migration budget is spent');
      return client.query({ text: sql, values, query_timeout: leftMs + 5_000 } as pg.QueryConfig);
    };
    /** The session settings of one migration transaction: the advisory lock may wait the budget, DDL may not. */
    const begin = async () => {
      await run(`SELECT set_config('statement_timeout', $1, true)`, [`${Math.max(1, deadline - Date.now())}ms`]);
      await run(lock);
      await run(`SELECT set_config('lock_timeout', $1, true)`, [`${lockTimeoutMs}ms`]);
    };
    await inTransaction(client, async () => {
      await begin();
      await run(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    });
    for (const m of options.migrations ?? migrations()) {
      for (let attempt = 1; ; attempt++) {
        try {
          await inTransaction(client, async () => {
            await begin();
            const done = await run('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version]);
            if (done.rowCount) return;
            await run(m.sql);
            await run('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
            applied.push(m.version);
          });
          break;
        } catch (error) {
          const code = (error as { code?: string }).code;
          if (code === LOCK_NOT_AVAILABLE && attempt <= lockRetries && Date.now() < deadline) {
            options.onRetry?.({ version: m.version, name: m.name, attempt, err: (error as Error).message });
            await new Promise((r) => setTimeout(r, Math.min(1000 * attempt, Math.max(0, deadline - Date.now()))));
            continue;
          }
          const hint =
            code === LOCK_NOT_AVAILABLE
              ? ` (a lock was not granted within ${lockTimeoutMs} ms, ${attempt} times: a long transaction holds the table; end it, or deploy again)`
              : code === '57014'
                ? ' (the migration budget ran out)'
                : '';
          throw new Error(`migration ${m.version}_${m.name} failed: ${(error as Error).message}${hint}`, {
            cause: error,
          });
        }
      }
    }
    return applied;
  });
}
