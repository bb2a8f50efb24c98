/**
 * The migration Lambda, invoked synchronously on every deploy (infra/migrate.ts, event `{ "source": "deploy" }`)
 * before the new API and worker code goes live. It applies the bundled migrations that are not applied yet and
 * returns what it did; any failure throws, so the invocation (and with it the deploy) fails.
 *
 * It needs PostgreSQL only: it opens one connection per invocation and closes it, since deploys are rare and a
 * connection kept in a frozen container would only hold a slot on the database. It is the only function that
 * connects as the master user: it then creates or updates the application role (DATABASE_APP_ROLE) that the
 * runtimes connect as, with the rights they need and no more (packages/store/src/app-role.ts).
 */
import { grantAppRole, latestMigration, migrate, recordRelease } from '@jobs/store';
import type { Context as LambdaContext } from 'aws-lambda';
import { loadConfig, redact } from './config';
import { lambdaHandler } from './lambda';
import { createLogger } from './logger';
import { migrateOptions } from './context';
import { createPool } from './resources';

/** Left of the invocation's time when the migration budget ends: to roll back, log and return the failure. */
const MARGIN_MS = 30_000;

export interface MigrateSummary {
  /** Versions applied by this invocation, in order (empty when the schema was up to date). */
  applied: number[];
  /** The newest version this bundle knows; the schema is at it when the invocation succeeds. */
  latest: number;
  /** The release recorded as the newest (the event's `release`, else RELEASE_ID); null: none given. */
  release: string | null;
  /** The application role brought up to date (DATABASE_APP_ROLE); null: none configured. */
  appRole: string | null;
  ms: number;
}

/**
 * Applies pending migrations to DATABASE_URL. Exported for tests; `handler` is this behind the middy wiring.
 * @example await runMigrations({ source: 'deploy' }, context)  // { applied: [1, 2], latest: 2, ms: 180 }
 */
async function runMigrations(
  event: { source?: string; release?: unknown } | null,
  context: LambdaContext,
): Promise<MigrateSummary> {
  const started = Date.now();
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel, sync: true });
  const pool = await createPool(config, { max: 1, logger });
  try {
    const release = releaseOf(event, config.releaseId);
    // The budget ends well before the function's timeout, so a step that outlasts it fails with its own message.
    const budgetMs = Math.min(config.migrationTimeoutMs, context.getRemainingTimeInMillis() - MARGIN_MS);
    const applied = await migrate(pool, migrateOptions(config, logger, Math.max(1000, budgetMs)));
    // Before the release is recorded: this release's runtimes connect as the role and need its grants on new tables.
    if (config.databaseAppRole) await grantAppRole(pool, config.databaseAppRole);
    // Recorded after the schema is at this release's version: workers of older releases retire once its workers run.
    if (release !== null) await recordRelease(pool, release);
    const appRole = config.databaseAppRole?.name ?? null;
    const summary = { applied, latest: latestMigration(), release, appRole, ms: Date.now() - started };
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

/** The release an invocation names, checked like RELEASE_ID (infra/migrate.ts sends the deploy's). */
function releaseOf(event: { release?: unknown } | null, fallback: string | null): string | null {
  const release = event?.release;
  if (release === undefined || release === null || release === '') return fallback;
  if (typeof release !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(release))
    throw new Error('the event\'s "release" must be 1-200 printable ASCII characters without whitespace');
  return release;
}

export const handler = lambdaHandler('migrate', runMigrations);
