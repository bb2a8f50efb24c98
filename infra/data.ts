/** PostgreSQL (RDS), Redis (ElastiCache), the API key secret, and the connection URLs built from them. */
import { vpc } from './network';
import { isProduction } from './stage';

export const database = new sst.aws.Postgres('Database', {
  vpc,
  // Every Lambda container holds its own connection; the proxy pools them when concurrency grows.
  // The component then reports the proxy endpoint as `host`.
  proxy: isProduction,
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

export const redis = new sst.aws.Redis('Redis', {
  vpc,
  engine: 'valkey',
  // Cluster mode is the component's default; spelled out because REDIS_CLUSTER depends on it.
  cluster: { nodes: 1 },
  // Evicting a lease or a delayed id would silently drop work; fail writes instead.
  parameters: { 'maxmemory-policy': 'noeviction' },
  dev: { host: '127.0.0.1', port: 6379 },
});

export const apiKeys = new sst.Secret('ApiKeys');

// Generated passwords may contain URL delimiters (the Redis auth token uses "!&#$^<>-").
const encode = (value: string | undefined) => encodeURIComponent(value ?? '');

function postgresUrl(host: $util.Input<string>) {
  const credentials = $resolve([database.username, database.password]).apply(([user, password]) =>
    password ? `${encode(user)}:${encode(password)}` : encode(user),
  );
  return $interpolate`postgres://${credentials}@${host}:${database.port}/${database.database}`;
}

/** Runtime connection string: through the RDS proxy in production stages, local PostgreSQL in `sst dev`. */
export const databaseUrl = postgresUrl(database.host);

/**
 * Migrations hold a session-level advisory lock across several transactions, and RDS Proxy may move a
 * session to another backend between transactions, so migrations connect to the instance directly.
 */
export const migrationDatabaseUrl = postgresUrl(database.nodes.instance?.address ?? database.host);

/** The runtime takes off | require | verify; `require` encrypts without checking RDS's certificate. */
export const databaseSsl = $dev ? 'off' : 'require';

/** ElastiCache enforces TLS (`transitEncryptionMode: required`) and AUTH; local Redis has neither. */
export const redisUrl = $dev
  ? $interpolate`redis://${redis.host}:${redis.port}`
  : $interpolate`rediss://${redis.username}:${$output(redis.password).apply(encode)}@${redis.host}:${redis.port}`;

/** ElastiCache runs in cluster mode (above); local Redis is a single server. */
export const redisCluster = $dev ? 'false' : 'true';
