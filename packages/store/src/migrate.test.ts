import { afterEach, beforeEach, expect, it } from 'vitest';
import pg from 'pg';
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

it('numbers migrations without gaps, starting at 1', () => {
  expect(migrations().map((m) => m.version)).toEqual(migrations().map((_, i) => i + 1));
});
