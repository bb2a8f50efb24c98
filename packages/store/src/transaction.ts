/**
 * @module transaction — a checked-out client, and a transaction on it, that survive the database going away.
 * A pooled client's connection that dies while the client is checked out emits 'error' on the client between
 * queries; pg only listens for that while the client is idle in the pool, so without a listener of our own the
 * process would crash (seen when PostgreSQL restarts under load). The failed connection also fails the next query,
 * so the error is only recorded here, and the client is discarded instead of returned to the pool.
 */
import type pg from 'pg';

export async function withClient<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    return await work(client);
  } catch (error) {
    broken ??= isConnectionError(error) ? (error as Error) : undefined;
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/** BEGIN, `work`, COMMIT on `client`; ROLLBACK if it throws. */
export async function inTransaction<T>(client: pg.PoolClient, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * Runs `work` in a transaction on one pooled client.
 * @example await transaction(pool, async (client) => { await client.query('...'); })
 */
export function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withClient(pool, (client) => inTransaction(client, () => work(client)));
}

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  // Class 08: connection exceptions; 57P0x: the server is shutting down or crashed.
  return (
    code.startsWith('08') || code.startsWith('57P') || /terminated|ECONNRESET|ECONNREFUSED|EPIPE/.test(String(error))
  );
}
