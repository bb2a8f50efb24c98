/**
 * PostgreSQL (RDS), Redis (ElastiCache, unless the stage's queue is on PostgreSQL), the API key secret, and the
 * connection URLs built from them.
 * No URL given to a runtime's plain environment carries a password: Lambdas take theirs from the linked resource
 * (SST encrypts linked values into the function bundle), the container worker from SSM SecureString parameters
 * that ECS injects when the task starts (the task definition holds only their ARNs).
 */
import { DATABASE_INSTANCE } from './budget';
import { vpc } from './network';
import { queueParameterName } from './preflight';
import { REDIS_INSTANCE } from './settings';
import { isProduction, queueBackend, settings } from './stage';

export const database = new sst.aws.Postgres('Database', {
  vpc,
  instance: DATABASE_INSTANCE,
  // The component starts at 20 GB and sets this as its autoscaling limit: equal to the start, autoscaling is off.
  storage: `${settings.databaseMaxStorageGb} GB`,
  multiAz: settings.databaseMultiAz,
  // Off unless the stage says so (infra/settings.ts has the reason); on, the component reports its endpoint as `host`.
  proxy: settings.databaseProxy,
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

function postgresUrl(host: $util.Input<string>, options: { password: boolean }) {
  const credentials = $resolve([database.username, database.password]).apply(([user, password]) =>
    options.password && password ? `${encode(user)}:${encode(password)}` : encode(user),
  );
  return $interpolate`postgres://${credentials}@${host}:${database.port}/${database.database}`;
}

/** Runtime connection string without its password: through the RDS proxy in production, local in `sst dev`. */
export const databaseUrl = postgresUrl(database.host, { password: false });

/**
 * Migrations connect to the instance directly, not through RDS Proxy. Each runs in its own transaction under a
 * transaction-level advisory lock, which would work behind the proxy too; but one connection per deploy needs no
 * pooling, and the migration then does not depend on the proxy's target being registered yet.
 */
export const migrationDatabaseUrl = postgresUrl(database.nodes.instance?.address ?? database.host, { password: false });

/** The runtime takes off | require | verify; `require` encrypts without checking RDS's certificate. */
export const databaseSsl = $dev ? 'off' : 'require';

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
 * locally against servers without passwords.
 */
export const containerSecrets = $dev
  ? undefined
  : {
      DATABASE_URL: new aws.ssm.Parameter('ContainerDatabaseUrl', {
        name: `/${$app.name}/${$app.stage}/container/database-url`,
        type: 'SecureString',
        value: postgresUrl(database.host, { password: true }),
      }).arn,
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
