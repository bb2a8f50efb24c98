/** Settings that would silently do something else stop the process at start, naming the variable. */
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { latestMigration, migrate } from '@jobs/store';
import { DATABASE_URL, REDIS_URL, createTestEnv, schemaUrl, uniqueName } from './support/env';
import { spawnEntry } from './support/processes';

/** An empty schema (no migration applied), dropped by the returned function. */
async function emptySchema() {
  const schema = uniqueName('unmigrated').toLowerCase();
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  return {
    url: schemaUrl(schema),
    async drop() {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

describe('start-up checks of a real process', () => {
  it('stops on a Redis database the server does not have (instead of using database 0)', async () => {
    const env = await createTestEnv('start');
    try {
      const child = spawnEntry('functions/worker-process.ts', { ...env.childEnv, REDIS_URL: `${REDIS_URL}/99` });
      expect((await child.exited).code).toBe(1);
      expect(child.output()).toMatch(/REDIS_URL names database 99, which the Redis server at .* does not have/);
    } finally {
      await env.cleanup();
    }
  });

  it('stops on an API key with whitespace, without printing the key', async () => {
    const child = spawnEntry('functions/local.ts', { API_KEYS: 'good-key-0123456789,bad secret-key', HTTP_PORT: '0' });
    expect((await child.exited).code).toBe(1);
    expect(child.output()).toMatch(/API_KEYS: key 2 holds whitespace/);
    expect(child.output()).not.toContain('secret-key');
  });

  it('does not migrate a worker or scheduler at start: it waits for the schema, then refuses, saying what to run', async () => {
    const db = await emptySchema();
    try {
      for (const entry of ['functions/worker-process.ts', 'functions/scheduler-process.ts']) {
        const child = spawnEntry(entry, { DATABASE_URL: db.url, QUEUE_BACKEND: 'postgres', SCHEMA_WAIT: '1s' });
        expect((await child.exited).code, entry).toBe(1);
        expect(child.output()).toContain(
          `the database schema is at migration 0, this build needs ${latestMigration()}`,
        );
        expect(child.output()).toMatch(/run `npm run migrate`/);
      }
      const check = new pg.Client({ connectionString: db.url });
      await check.connect();
      const { rows } = await check.query(`SELECT to_regclass('schema_migrations') AS t`);
      await check.end();
      expect(rows[0].t).toBeNull();
    } finally {
      await db.drop();
    }
  });

  it('starts the worker once the deploy has migrated the schema it waited for', async () => {
    const db = await emptySchema();
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    try {
      const child = spawnEntry('functions/worker-process.ts', {
        DATABASE_URL: db.url,
        QUEUE_BACKEND: 'postgres',
        SCHEMA_WAIT: '60s',
      });
      await child.waitFor(/"db.schema_behind"/);
      await migrate(pool);
      await child.waitFor(/"worker.started"/, 30_000);
      child.kill('SIGTERM');
      expect((await child.exited).code).toBe(0);
    } finally {
      await pool.end();
      await db.drop();
    }
  }, 60_000);
});
