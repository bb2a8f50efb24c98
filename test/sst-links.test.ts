/**
 * Credentials through SST's linked resources, read the way a deployed Lambda reads them: SST encrypts the linked
 * resources' properties into a file in the bundle (AES-256-GCM, key in SST_KEY), and the SDK decrypts it on first
 * use. Here the file is written in that format, so the real `sst/resource` loader in functions/config.ts reads it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createCipheriv, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'sst-links-'));
const key = randomBytes(32);
const linked = {
  Database: { host: 'db.proxy.test', port: 5432, username: 'postgres', database: 'jobs', password: 'pg/pa:ss@word#1' },
  DatabaseApp: { username: 'jobs_app', password: 'app-Pa55word-0123456789' },
  Redis: { host: 'redis.test', port: 6379, username: 'default', password: 'r3d!s#auth&token^<>-' },
  ApiKeys: { value: 'key-one-0123456789,key-two-0123456789' },
};
const cipher = createCipheriv('aes-256-gcm', key, Buffer.alloc(12, 0));
const file = join(dir, 'resource.enc');
writeFileSync(file, Buffer.concat([cipher.update(JSON.stringify(linked)), cipher.final(), cipher.getAuthTag()]));
// Set before the loader's first read, as the Lambda runtime does before the handler module loads.
Object.assign(process.env, {
  SST_RESOURCE_App: JSON.stringify({ name: 'jobs-scheduler', stage: 'test' }),
  SST_KEY: key.toString('base64'),
  SST_KEY_FILE: file,
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('credentials from SST links', () => {
  it('fills in the passwords and API keys that the environment leaves out', async () => {
    const { loadConfig } = await import('../functions/config');
    const config = loadConfig({
      DATABASE_URL: 'postgres://postgres@db.proxy.test:5432/jobs',
      REDIS_URL: 'rediss://default@redis.test:6379',
    });
    const db = new URL(config.databaseUrl);
    expect(decodeURIComponent(db.password)).toBe(linked.Database.password);
    expect(db.hostname).toBe('db.proxy.test');
    const redis = new URL(config.redisUrl);
    expect(decodeURIComponent(redis.password)).toBe(linked.Redis.password);
    expect(config.apiKeys.map((k) => k.key)).toEqual(['key-one-0123456789', 'key-two-0123456789']);
  });

  it("gives the application role's URL its password, and the migration step the role to create", async () => {
    const { loadConfig } = await import('../functions/config');
    const runtime = loadConfig({ DATABASE_URL: 'postgres://jobs_app@db.proxy.test:5432/jobs' });
    expect(decodeURIComponent(new URL(runtime.databaseUrl).password)).toBe(linked.DatabaseApp.password);
    expect(runtime.databaseAppRole).toBeNull();
    const migrate = loadConfig({
      DATABASE_URL: 'postgres://postgres@db.test:5432/jobs',
      DATABASE_APP_ROLE: 'jobs_app',
    });
    expect(decodeURIComponent(new URL(migrate.databaseUrl).password)).toBe(linked.Database.password);
    expect(migrate.databaseAppRole).toEqual({ name: 'jobs_app', password: linked.DatabaseApp.password });
    // A role the link does not name has no password to take: refused at start, not at the first connection.
    expect(() => loadConfig({ DATABASE_URL: 'postgres://postgres@db.test/jobs', DATABASE_APP_ROLE: 'other' })).toThrow(
      /DATABASE_APP_PASSWORD/,
    );
  });

  it('keeps what the environment says when it says it', async () => {
    const { loadConfig } = await import('../functions/config');
    const config = loadConfig({
      DATABASE_URL: 'postgres://postgres:local@127.0.0.1/postgres',
      API_KEYS: 'own-key-0123456789',
    });
    expect(new URL(config.databaseUrl).password).toBe('local');
    expect(config.apiKeys).toEqual([{ name: 'key1', role: 'admin', key: 'own-key-0123456789' }]);
  });

  it('passes the password to pg and ioredis intact', async () => {
    const { loadConfig } = await import('../functions/config');
    const { parse } = await import('pg-connection-string');
    const config = loadConfig({ DATABASE_URL: 'postgres://postgres@db.proxy.test:5432/jobs' });
    expect(parse(config.databaseUrl).password).toBe(linked.Database.password);
  });
});
