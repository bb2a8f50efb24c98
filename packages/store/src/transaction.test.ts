import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { DATABASE_URL } from '../../../test/support/env';
import { transaction } from './transaction';

let pool: pg.Pool;
let admin: pg.Client;
beforeAll(async () => {
  pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  pool.on('error', () => undefined);
  admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
});
afterAll(async () => {
  await pool.end();
  await admin.end();
});

it('survives the connection dying between two queries of a transaction (no crash, the next query fails)', async () => {
  const run = transaction(pool, async (client) => {
    const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
    await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
    // The client emits 'error' now, while checked out and between queries: unhandled, it would kill the process.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await client.query('SELECT 1');
  });
  await expect(run).rejects.toThrow();
  // The broken client was discarded, not returned to the pool.
  const { rows } = await pool.query('SELECT 1 AS one');
  expect(rows[0].one).toBe(1);
});

it('rolls back when the work throws', async () => {
  const name = `t_${Date.now()}`;
  await expect(
    transaction(pool, async (client) => {
      await client.query(`CREATE TABLE ${name} (x int)`);
      throw new Error('boom');
    }),
  ).rejects.toThrow('boom');
  const { rows } = await pool.query('SELECT to_regclass($1) AS t', [name]);
  expect(rows[0].t).toBeNull();
});
