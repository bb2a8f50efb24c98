import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate, migrations } from './migrate';
import { DATABASE_URL, schemaUrl, uniqueName } from '../../../test/support/env';

let schema: string;
let admin: pg.Client;

beforeEach(async () => {
  schema = uniqueName('mig').toLowerCase();
  admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
});
afterEach(async () => {
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
});

it('applies every migration once when many processes start at the same time', async () => {
  const pools = Array.from({ length: 6 }, () => new pg.Pool({ connectionString: schemaUrl(schema), max: 2 }));
  try {
    const results = await Promise.all(pools.map((p) => migrate(p)));
    const all = results.flat().sort((a, b) => a - b);
    expect(all).toEqual(migrations().map((m) => m.version));
    const { rows } = await admin.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
    expect(rows.map((r) => r.version)).toEqual(all);
    expect(await migrate(pools[0]!)).toEqual([]);
  } finally {
    await Promise.all(pools.map((p) => p.end()));
  }
});

it('numbers migrations uniquely and in order, starting at 1 (numbers reserved for work in flight may be skipped)', () => {
  const versions = migrations().map((m) => m.version);
  expect(versions[0]).toBe(1);
  for (let i = 1; i < versions.length; i++) expect(versions[i]).toBeGreaterThan(versions[i - 1]!);
});

describe('a migration run', () => {
  const pool = () => new pg.Pool({ connectionString: schemaUrl(schema), max: 2 });

  it('gives up on a lock a long transaction holds within the lock timeout, retries, then fails saying why', async () => {
    const p = pool();
    const holder = new pg.Client({ connectionString: schemaUrl(schema) });
    await holder.connect();
    try {
      await migrate(p, { migrations: [{ version: 1, name: 'table', sql: 'CREATE TABLE t (id int)' }] });
      // A long transaction (an open report, a stuck session) holds a lock on the table.
      await holder.query('BEGIN');
      await holder.query('SELECT * FROM t');
      const retries: number[] = [];
      const started = Date.now();
      const failure = await migrate(p, {
        lockTimeoutMs: 200,
        lockRetries: 2,
        migrations: [
          { version: 1, name: 'table', sql: 'CREATE TABLE t (id int)' },
          { version: 2, name: 'column', sql: 'ALTER TABLE t ADD COLUMN x int' },
        ],
        onRetry: (e) => retries.push(e.attempt),
      }).catch((e: Error) => e);
      expect(String(failure)).toMatch(
        /migration 2_column failed: .*lock timeout.*a lock was not granted within 200 ms, 3 times/,
      );
      expect(retries).toEqual([1, 2]);
      // Three tries of 200 ms and pauses of 1 s and 2 s, not a wait for the transaction.
      expect(Date.now() - started).toBeLessThan(6_000);
      await holder.query('COMMIT');
      const { rows } = await admin.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
      expect(rows.map((r) => r.version)).toEqual([1]);
    } finally {
      await holder.end();
      await p.end();
    }
  });

  it('applies a lower-numbered migration a database lacks though it has later ones (013 landing after 014)', async () => {
    const p = pool();
    try {
      const one = { version: 1, name: 'one', sql: 'CREATE TABLE t (id int)' };
      const three = { version: 3, name: 'three', sql: 'ALTER TABLE t ADD COLUMN c int' };
      expect(await migrate(p, { migrations: [one, three] })).toEqual([1, 3]);
      const two = { version: 2, name: 'two', sql: 'ALTER TABLE t ADD COLUMN b int' };
      expect(await migrate(p, { migrations: [one, two, three] })).toEqual([2]);
      const { rows } = await admin.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
      expect(rows.map((r) => r.version)).toEqual([1, 2, 3]);
    } finally {
      await p.end();
    }
  });

  it("runs a step longer than the pool's query timeout within its own budget, and stops at the budget", async () => {
    const p = new pg.Pool({ connectionString: schemaUrl(schema), max: 1, query_timeout: 300 });
    try {
      const slow = { version: 1, name: 'slow', sql: 'SELECT pg_sleep(0.8)' };
      expect(await migrate(p, { migrations: [slow] })).toEqual([1]);
      const slower = { version: 2, name: 'slower', sql: 'SELECT pg_sleep(5)' };
      const failure = await migrate(p, { budgetMs: 700, migrations: [slow, slower] }).catch((e: Error) => e);
      expect(String(failure)).toMatch(/migration 2_slower failed: .*statement timeout.*the migration budget ran out/);
    } finally {
      await p.end();
    }
  });
});

describe("the PostgreSQL queue's functions (packages/queue-postgres/sql)", () => {
  const dir = fileURLToPath(new URL('../../queue-postgres/sql/', import.meta.url));
  const files = readdirSync(dir).filter((f) => f.endsWith('.sql'));

  it('are installed by migration as their files define them, also over the ones a database already has', async () => {
    expect(files.length).toBeGreaterThan(0);
    const p = new pg.Pool({ connectionString: schemaUrl(schema), max: 2 });
    try {
      await migrate(p);
      // A database that ran the old 009 has every function already: installing them again replaces them in place.
      const install = migrations().find((m) => m.name === 'queue_functions')!;
      await migrate(p, { migrations: [{ version: 10_000, name: 'again', sql: install.sql }] });
      for (const file of files) {
        const text = readFileSync(join(dir, file), 'utf8');
        const name = file.replace(/\.sql$/, '');
        const body = /AS \$\$([\s\S]*)\$\$/.exec(text)![1];
        const { rows } = await admin.query(
          `SELECT p.prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE n.nspname = $1 AND p.proname = $2`,
          [schema, name],
        );
        expect(rows.map((r) => r.prosrc)).toEqual([body]);
      }
    } finally {
      await p.end();
    }
  });
});
