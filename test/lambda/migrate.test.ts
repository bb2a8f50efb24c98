/** functions/migrate.ts invoked as the deploy does (`{ "source": "deploy" }`), on a fresh schema. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { migrations } from '@jobs/store';
import { handler } from '../../functions/migrate';
import { lambdaContext } from '../fixtures/events';
import { DATABASE_URL, schemaUrl, uniqueName } from '../support/env';
import { deadEndpoint } from './put-events-server';

let schema: string;
let admin: pg.Client;
const saved = { ...process.env };
const invoke = () => handler({ source: 'deploy' }, lambdaContext({ functionName: 'Migrate', timeoutMs: 300_000 }));

beforeEach(async () => {
  schema = uniqueName('lmigrate').toLowerCase();
  admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  Object.assign(process.env, { DATABASE_URL: schemaUrl(schema), LOG_LEVEL: 'silent' });
});
afterEach(async () => {
  process.env = { ...saved };
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
});

describe('migrate Lambda', () => {
  it('applies every migration to a fresh schema, then nothing on the next deploy', async () => {
    const all = migrations().map((m) => m.version);
    const first = await invoke();
    expect(first.applied).toEqual(all);
    expect(first.latest).toBe(all[all.length - 1]);
    const { rows } = await admin.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
      [schema],
    );
    expect(rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining(['executions', 'jobs', 'schema_migrations', 'workers']),
    );
    const again = await invoke();
    expect(again).toMatchObject({ applied: [], latest: first.latest });
  });

  it("records the deploy's release at the schema's version, once, after the migrations", async () => {
    const context = lambdaContext({ functionName: 'Migrate', timeoutMs: 300_000 });
    const first = await handler({ source: 'deploy', release: '2026-12-02T10:00:00.000Z' }, context);
    expect(first.release).toBe('2026-12-02T10:00:00.000Z');
    await handler({ source: 'deploy', release: '2026-12-02T10:00:00.000Z' }, context);
    await handler({ source: 'deploy', release: '2026-12-02T11:00:00.000Z' }, context);
    const { rows } = await admin.query(`SELECT release, schema_version FROM ${schema}.releases ORDER BY seq`);
    expect(rows).toEqual([
      { release: '2026-12-02T10:00:00.000Z', schema_version: first.latest },
      { release: '2026-12-02T11:00:00.000Z', schema_version: first.latest },
    ]);
    // Without one in the event, RELEASE_ID; without either, nothing.
    process.env.RELEASE_ID = 'from-env';
    expect((await invoke()).release).toBe('from-env');
    delete process.env.RELEASE_ID;
    expect((await invoke()).release).toBeNull();
    expect((await admin.query(`SELECT count(*)::int AS n FROM ${schema}.releases`)).rows[0].n).toBe(3);
    await expect(handler({ source: 'deploy', release: 'two words' }, context)).rejects.toThrow(/"release" must be/);
  });

  it('lets concurrent deploys race: each version is applied once', async () => {
    const results = await Promise.all([invoke(), invoke(), invoke()]);
    expect(results.flatMap((r) => r.applied).sort((a, b) => a - b)).toEqual(migrations().map((m) => m.version));
  });

  it('fails the invocation (and so the deploy) with the redacted URL when the database is unreachable', async () => {
    process.env.DATABASE_URL = `${(await deadEndpoint()).replace('http://', 'postgres://deployer:hunter2@')}/postgres`;
    const error = await invoke().then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(/^migrations failed on postgres:\/\/deployer:\*\*\*@127\.0\.0\.1:\d+\/postgres: /);
    expect(error?.message).not.toContain('hunter2');
  });
});
