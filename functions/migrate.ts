/**
 * The migration Lambda, invoked synchronously on every deploy (infra/migrate.ts, event `{ "source": "deploy" }`)
 * before the new API and worker code goes live. It applies the bundled migrations that are not applied yet and
 * returns what it did; any failure throws, so the invocation (and with it the deploy) fails.
 *
 * It needs PostgreSQL only: it opens one connection per invocation and closes it, since deploys are rare and a
 * connection kept in a frozen container would only hold a slot on the database.
 */
import { migrate, migrations } from '@jobs/store';
import type { Context as LambdaContext } from 'aws-lambda';
import { loadConfig, redact } from './config';
import { lambdaHandler } from './lambda';
import { createLogger } from './logger';
import { createPool } from './resources';

export interface MigrateSummary {
  /** Versions applied by this invocation, in order (empty when the schema was up to date). */
  applied: number[];
  /** The newest version this bundle knows; the schema is at it when the invocation succeeds. */
  latest: number;
  ms: number;
}

/**
 * Applies pending migrations to DATABASE_URL. Exported for tests; `handler` is this behind the middy wiring.
 * @example await runMigrations({ source: 'deploy' }, context)  // { applied: [1, 2], latest: 2, ms: 180 }
 */
export async function runMigrations(
  event: { source?: string } | null,
  context: LambdaContext,
): Promise<MigrateSummary> {
  const started = Date.now();
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel, sync: true });
  const pool = createPool(config, { max: 1, logger });
  try {
    const applied = await migrate(pool);
    const summary = { applied, latest: Math.max(0, ...migrations().map((m) => m.version)), ms: Date.now() - started };
    logger.info({
      event: 'lambda.migrated',
      source: event?.source ?? null,
      request_id: context.awsRequestId,
      ...summary,
    });
    return summary;
  } catch (error) {
    // pg's messages never carry the URL; adding the redacted one says which database failed.
    throw new Error(`migrations failed on ${redact(config.databaseUrl)}: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    await pool.end().catch(() => undefined);
  }
}

export const handler = lambdaHandler('migrate', runMigrations);
