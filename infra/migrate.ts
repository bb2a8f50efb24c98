/** The migration Lambda and its deploy-time invocation, which every other function and the service wait for. */
import { MIGRATE_RESERVED_CONCURRENCY } from './budget';
import { appRoleEnvironment, database, databaseApp, databaseSsl, migrationDatabaseUrl } from './data';
import { lambdaDefaults } from './runtime';

/**
 * Migrations need PostgreSQL only (functions/migrate.ts opens one connection and nothing else): the instance's
 * address, and its password through the link, which grants no IAM permission. The only function that gets the
 * master user's password; it also creates or updates the runtimes' role (DATABASE_APP_ROLE, password from the
 * DatabaseApp link).
 */
const environment = { DATABASE_URL: migrationDatabaseUrl, DATABASE_SSL: databaseSsl, ...appRoleEnvironment };

/**
 * This deploy's release: recorded by the migration step once the schema is at its version, and given to the workers
 * as RELEASE_ID. Workers of an older release retire (stop claiming, finish what they run, exit 0) once this release's
 * workers serve their lanes, so a deploy never waits on old tasks that keep taking work. New on every deploy, so
 * every deploy also starts new container tasks (an old task that retired is never restarted with the old value).
 * Absent in `sst dev`, whose workers never retire.
 */
export const RELEASE_ID: string | undefined = $dev ? undefined : new Date().toISOString();

/** RELEASE_ID for a worker's environment (nothing in `sst dev`). */
export const releaseEnvironment: Record<string, string> = RELEASE_ID ? { RELEASE_ID } : {};

export const migrator = new sst.aws.Function('Migrate', {
  ...lambdaDefaults,
  handler: 'functions/migrate.handler',
  // Lambda's maximum: a long step (an index on a big table) gets the time; MIGRATION_TIMEOUT bounds the run inside it.
  timeout: '15 minutes',
  concurrency: { reserved: MIGRATE_RESERVED_CONCURRENCY },
  link: [database, databaseApp],
  environment,
});

/**
 * Runs the migrations synchronously on every deploy (they are forward-only and skip what is applied);
 * a failure fails the deploy before new API or worker code goes live. Skipped in `sst dev`, where
 * functions run on the developer's machine and the DevCommand below migrates the local database.
 */
export const migration = $dev
  ? undefined
  : new aws.lambda.Invocation('MigrateOnDeploy', {
      functionName: migrator.name,
      input: JSON.stringify({ source: 'deploy', release: RELEASE_ID }),
      // A new value on every deploy replaces the resource, and a replacement invokes the function again.
      triggers: { release: RELEASE_ID! },
    });

if ($dev) {
  new sst.x.DevCommand('MigrateLocal', {
    dev: { command: 'npm run migrate', autostart: true },
    environment,
  });
}

/**
 * A `transform` hook that makes the underlying resource wait for this deploy's migrations. `dependsOn`
 * on an SST component does not reach the resources it creates, so it goes on the resource itself.
 * @example new sst.aws.Function("Api", { ..., transform: { function: afterMigration } })
 */
export function afterMigration<T>(_args: T, opts: $util.CustomResourceOptions): undefined {
  if (!migration) return undefined;
  const existing = opts.dependsOn;
  const earlier = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing];
  opts.dependsOn = [...earlier, migration] as $util.Input<$util.Resource>[];
  return undefined;
}
