/**
 * PostgreSQL (RDS), Redis (ElastiCache, unless the stage's queue is on PostgreSQL), the API key secret, and the
 * connection URLs built from them.
 * No URL given to a runtime's plain environment carries a password: Lambdas take theirs from the linked resource
 * (SST encrypts linked values into the function bundle), the container worker from SSM SecureString parameters
 * that ECS injects when the task starts (the task definition holds only their ARNs).
 * Least privilege: only the migration step connects as the RDS master user (it owns the schema). The runtimes (API,
 * tick, workers) connect as APP_ROLE, which that step creates and grants row access, sequences and the queue's
 * functions to, and nothing more (packages/store/src/app-role.ts).
 */
import { createHmac } from 'node:crypto';
import { DATABASE_INSTANCE } from './budget';
import { vpc } from './network';
import { queueParameterName } from './preflight';
import { REDIS_INSTANCE } from './settings';
import { isProduction, queueBackend, settings } from './stage';

/** The role the runtimes connect as on a deployed stage; `sst dev` runs everything as the local superuser. */
export const APP_ROLE = 'jobs_app';

/** The proxy's credentials for APP_ROLE need the database's password, which exists only after the database. */
let settleAppPassword: (password: $util.Output<string>) => void = () => undefined;
const appPasswordLater = new Promise<$util.Output<string>>((resolve) => (settleAppPassword = resolve));

export const database = new sst.aws.Postgres('Database', {
  vpc,
  instance: DATABASE_INSTANCE,
  // The component starts at 20 GB and sets this as its autoscaling limit: equal to the start, autoscaling is off.
  storage: `${settings.databaseMaxStorageGb} GB`,
  multiAz: settings.databaseMultiAz,
  // Off unless the stage says so (infra/settings.ts has the reason); on, the component reports its endpoint as `host`.
  // The proxy lets in only users it has credentials for: the master user (the component adds it) and APP_ROLE.
  proxy: settings.databaseProxy
    ? { credentials: [{ username: APP_ROLE, password: appPasswordLater as unknown as $util.Input<string> }] }
    : false,
  dev: {
    host: '127.0.0.1',
    port: 5432,
    username: 'postgres',
    // The component refuses `sst dev` without a password; empty matches trust auth in docker-compose.yml.
    password: '',
    database: 'postgres',
  },
  // The component hard-codes skipFinalSnapshot; `removal: retain` does not cover replacements.
  transform: isProduction
    ? {
        instance: {
          deletionProtection: true,
          skipFinalSnapshot: false,
          finalSnapshotIdentifier: `${$app.name}-${$app.stage}-final`,
        },
      }
    : undefined,
});

/**
 * APP_ROLE's password: an HMAC of the master password, so it needs no other provider, stays the same from deploy to
 * deploy (runtimes of the previous release keep connecting while a deploy runs), changes with the master password,
 * and tells nothing about it.
 */
const appPassword = $resolve([database.password]).apply(([master]) =>
  createHmac('sha256', master).update(`${$app.name}/${$app.stage}/${APP_ROLE}`).digest('base64url'),
);
settleAppPassword(appPassword);

/**
 * What the runtimes link to connect: APP_ROLE with its password on a deployed stage, the local user in `sst dev`.
 * Only the migration step links `database` itself (the master user).
 */
export const databaseApp = new sst.Linkable('DatabaseApp', {
  properties: $dev
    ? { username: database.username, password: database.password }
    : { username: APP_ROLE, password: appPassword },
});

/** Null on a stage whose queue is on PostgreSQL (infra/stage.ts). */
export const redis =
  queueBackend === 'redis'
    ? new sst.aws.Redis('Redis', {
        vpc,
        engine: 'valkey',
        instance: REDIS_INSTANCE,
        // Cluster mode is the component's default; spelled out because REDIS_CLUSTER depends on it.
        cluster: { nodes: 1 },
        // Evicting a lease or a delayed id would silently drop work; fail writes instead.
        parameters: { 'maxmemory-policy': 'noeviction' },
        dev: { host: '127.0.0.1', port: 6379 },
        transform: { cluster: redisAvailability },
      })
    : null;

/** Where this stage's queue lives, for the next deploy's preflight (infra/preflight.ts); not for `sst dev`. */
export const queueRecord = $dev
  ? undefined
  : new aws.ssm.Parameter('QueueBackend', {
      name: queueParameterName($app.name, $app.stage),
      type: 'String',
      value: queueBackend,
      overwrite: true,
    });

/**
 * The component creates one node (cluster mode, no replica, no snapshots). A stage with `redisReplica` gets a
 * replica in a second zone with automatic failover; `redisSnapshotDays` keeps daily snapshots.
 */
function redisAvailability(args: aws.elasticache.ReplicationGroupArgs): undefined {
  if (settings.redisReplica) {
    args.replicasPerNodeGroup = 1;
    args.multiAzEnabled = true;
    args.automaticFailoverEnabled = true;
  }
  if (settings.redisSnapshotDays > 0) {
    args.snapshotRetentionLimit = settings.redisSnapshotDays;
    args.snapshotWindow = '03:00-04:00';
  }
  return undefined;
}

/** API keys, comma-separated `name:role:key` entries (or bare admin keys), as API_KEYS. Set it for every stage: `npx sst secret set ApiKeys <keys> --fallback`. */
export const apiKeys = new sst.Secret('ApiKeys');

// Generated passwords may contain URL delimiters (the Redis auth token uses "!&#$^<>-").
const encode = (value: string | undefined) => encodeURIComponent(value ?? '');

function postgresUrl(
  host: $util.Input<string>,
  login: { username: $util.Input<string>; password: $util.Input<string> },
  options: { password: boolean },
) {
  const credentials = $resolve([login.username, login.password]).apply(([user, password]) =>
    options.password && password ? `${encode(user)}:${encode(password)}` : encode(user),
  );
  return $interpolate`postgres://${credentials}@${host}:${database.port}/${database.database}`;
}

const master = { username: database.username, password: database.password };
const app = databaseApp.properties;

/** Runtime connection string, as APP_ROLE, without its password: through the RDS proxy when on, local in `sst dev`. */
export const databaseUrl = postgresUrl(database.host, app, { password: false });

/**
 * Migrations connect to the instance directly, not through RDS Proxy. Each runs in its own transaction under a
 * transaction-level advisory lock, which would work behind the proxy too; but one connection per deploy needs no
 * pooling, and the migration then does not depend on the proxy's target being registered yet.
 */
export const migrationDatabaseUrl = postgresUrl(database.nodes.instance?.address ?? database.host, master, {
  password: false,
});

/** What the migration step creates or updates APP_ROLE from (its password comes from the DatabaseApp link). */
export const appRoleEnvironment: Record<string, string> = $dev ? {} : { DATABASE_APP_ROLE: APP_ROLE };

/**
 * The runtime takes off | require | verify. Deployed, `verify`: the certificate of the instance (and of RDS Proxy)
 * is checked against the RDS CA bundle and the host name, so nothing between a function and RDS can pose as it;
 * `require` would encrypt and accept any certificate.
 */
export const databaseSsl = $dev ? 'off' : 'verify';

/**
 * What the runtimes need to reach Redis (none without it). ElastiCache enforces TLS (`transitEncryptionMode:
 * required`) and AUTH, and runs in cluster mode (above); local Redis has none of these.
 */
export const redisEnvironment: Record<string, $util.Input<string>> = redis
  ? {
      REDIS_URL: $dev
        ? $interpolate`redis://${redis.host}:${redis.port}`
        : $interpolate`rediss://${redis.username}@${redis.host}:${redis.port}`,
      REDIS_CLUSTER: $dev ? 'false' : 'true',
    }
  : {};

/**
 * The container worker's URLs with their passwords, as SSM SecureString parameters (encrypted with the account's
 * aws/ssm key); ECS reads them with the task's execution role. Not created in `sst dev`, where the worker runs
 * locally against servers without passwords. `opts` makes them wait for the deploy's migration step: a task that
 * starts meanwhile must not read APP_ROLE's URL before that step has created the role.
 */
export function containerSecrets(opts: $util.CustomResourceOptions): Record<string, $util.Output<string>> | undefined {
  if ($dev) return undefined;
  return {
    DATABASE_URL: new aws.ssm.Parameter(
      'ContainerDatabaseUrl',
      {
        name: `/${$app.name}/${$app.stage}/container/database-url`,
        type: 'SecureString',
        value: postgresUrl(database.host, app, { password: true }),
      },
      opts,
    ).arn,
    ...(redis
      ? {
          REDIS_URL: new aws.ssm.Parameter('ContainerRedisUrl', {
            name: `/${$app.name}/${$app.stage}/container/redis-url`,
            type: 'SecureString',
            value: $interpolate`rediss://${redis.username}:${$output(redis.password).apply(encode)}@${redis.host}:${redis.port}`,
          }).arn,
        }
      : {}),
  };
}
