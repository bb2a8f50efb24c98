/**
 * @module pool — the pg pool every process uses, with three changes for serverless and pooled deployments:
 *
 * - A connection idle longer than `idleTimeoutMillis` by the wall clock is closed at checkout instead of used.
 *   pg's own idle timer cannot fire while a Lambda container is frozen, so after a quiet period the first query of
 *   a thawed container would otherwise go to a connection RDS Proxy (or the server) closed meanwhile.
 * - A query that fails because its connection died is sent once more, on a new connection, when doing so is safe:
 *   reads, and writes marked `idempotent()` (their fencing makes a second run change nothing). Anything else fails
 *   as before, and the caller decides (the API answers 503, the worker keeps its outcomes and writes them later).
 * - `unnamedStatements`: statements are sent without their name, so the server keeps no prepared statement per
 *   session. Named prepared statements are session state, which a transaction pooler such as RDS Proxy may pin a
 *   client to one database connection for (see README "Deploy on AWS").
 */
import pg from 'pg';

/** Marks a query config as safe to run twice (a fenced or keyed write); the pool may retry it once. */
const IDEMPOTENT = Symbol('idempotent');

/**
 * @example await pool.query(idempotent({ text: 'UPDATE ... WHERE lease_token = $2', values: [id, token] }))
 */
export function idempotent<T extends pg.QueryConfig>(config: T): T {
  return Object.assign(config, { [IDEMPOTENT]: true });
}

/** Statements that only read: the first keyword is a read and no keyword of a write or a session lock appears. */
const READ_START = /^\s*(SELECT|WITH|VALUES|SHOW|TABLE)\b/i;
const SIDE_EFFECT =
  /\b(INSERT|UPDATE|DELETE|MERGE|COPY|CALL|DO|LOCK|NOTIFY|nextval|setval|pg_advisory\w*|pg_notify|set_config|FOR\s+(NO\s+KEY\s+)?UPDATE|FOR\s+(KEY\s+)?SHARE)\b/i;

/** Verdicts by SQL text: the hot path sends the same few texts thousands of times a second. */
const verdicts = new Map<string, boolean>();
const MAX_VERDICTS = 1000;

/** True for a statement a second run cannot change anything by. */
export function retrySafe(query: unknown): boolean {
  if (typeof query === 'string') {
    let verdict = verdicts.get(query);
    if (verdict === undefined) {
      verdict = READ_START.test(query) && !SIDE_EFFECT.test(query);
      if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
      verdicts.set(query, verdict);
    }
    return verdict;
  }
  if (!query || typeof query !== 'object') return false;
  if ((query as Record<symbol, unknown>)[IDEMPOTENT] === true) return true;
  const text = (query as { text?: unknown }).text;
  return typeof text === 'string' && retrySafe(text);
}

/** The connection itself failed (closed, reset, terminated by the server), as opposed to the statement. */
export function isConnectionError(error: unknown): boolean {
  const code = String((error as { code?: unknown })?.code ?? '');
  // Class 08: connection exceptions; 57P0x: the server terminated the session (shutdown, crash, pg_terminate_backend).
  if (
    code.startsWith('08') ||
    code.startsWith('57P') ||
    ['ECONNRESET', 'EPIPE', 'ECONNREFUSED', 'ETIMEDOUT'].includes(code)
  )
    return true;
  return /Connection terminated|terminating connection|Client has encountered a connection error|write after end/i.test(
    String((error as Error)?.message ?? error),
  );
}

export interface StorePoolEvent {
  event: 'db.stale_connection_closed' | 'db.query_retried';
  idle_ms?: number;
  err?: string;
}

export interface StorePoolConfig extends pg.PoolConfig {
  /** Send statements without their names: nothing is prepared per session. */
  unnamedStatements?: boolean;
  /** Told about evictions and retries (a logger line). */
  onEvent?: (event: StorePoolEvent) => void;
}

type ConnectCallback = (
  err: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: unknown) => void,
) => void;

/**
 * @example const pool = new StorePool({ connectionString, max: 1, idleTimeoutMillis: 30_000, unnamedStatements: true });
 */
export class StorePool extends pg.Pool {
  private readonly releasedAt = new WeakMap<object, number>();
  private readonly evictAfterMs: number;
  private readonly onEvent: (event: StorePoolEvent) => void;

  constructor(config: StorePoolConfig = {}) {
    const { unnamedStatements, onEvent, ...options } = config;
    super(options);
    this.evictAfterMs = options.idleTimeoutMillis ?? 10_000;
    this.onEvent = onEvent ?? (() => undefined);
    this.on(
      'release',
      (_error: Error | undefined, client: pg.PoolClient) => void this.releasedAt.set(client, Date.now()),
    );
    if (unnamedStatements) this.on('connect', (client: pg.PoolClient) => sendUnnamed(client));
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    const fresh = this.connectFresh();
    if (!callback) return fresh;
    fresh.then(
      (client) => callback(undefined, client, (release) => client.release(release as boolean | Error | undefined)),
      (error: Error) => callback(error, undefined, () => undefined),
    );
  }

  // pg-pool's query() checks out through connect() above, so its connections are fresh too. pg's query() is
  // overloaded (promise, callback, submittable) and no return type but `any` satisfies all of them at once.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: unknown[]): any {
    const [query, values, callback] = args;
    const submittable = typeof (query as { submit?: unknown })?.submit === 'function';
    if (submittable || typeof values === 'function' || typeof callback === 'function' || !retrySafe(query)) {
      return (super.query as (...a: unknown[]) => unknown)(...args);
    }
    const run = () => (super.query as (...a: unknown[]) => Promise<pg.QueryResult>)(query, values);
    return run().catch((error: unknown) => {
      if (!isConnectionError(error) || this.ending) throw error;
      this.onEvent({ event: 'db.query_retried', err: String((error as Error)?.message ?? error) });
      return run();
    });
  }

  private async connectFresh(): Promise<pg.PoolClient> {
    for (;;) {
      const client = await super.connect();
      const since = this.releasedAt.get(client);
      const idleMs = since === undefined ? 0 : Date.now() - since;
      if (idleMs <= this.evictAfterMs) return client;
      this.onEvent({ event: 'db.stale_connection_closed', idle_ms: idleMs });
      client.release(true);
    }
  }
}

/** Makes one client drop statement names before sending, so PostgreSQL parses them as unnamed statements. */
function sendUnnamed(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...a: unknown[]) => unknown;
  (client as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
    if (config && typeof config === 'object' && typeof (config as { name?: unknown }).name === 'string') {
      const { name: _name, ...unnamed } = config as { name?: string };
      return query(unnamed, ...rest);
    }
    return query(config, ...rest);
  };
}
