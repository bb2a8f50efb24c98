/**
 * The least-privilege application role, against the real PostgreSQL. The migration step runs as a stand-in for the
 * RDS master user (a login role with CREATEROLE that owns the schema, not a superuser) and creates the role; the
 * role then runs a job's whole life on the PostgreSQL queue (its functions included), and cannot create, alter,
 * truncate or drop a table. The stored password is a SCRAM verifier that PostgreSQL's client accepts.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createJob,
  deleteJob,
  NO_LIMITS,
  pauseJob,
  restoreFlow,
  resumeJob,
  triggerJob,
  type QueueAdapter,
} from '@jobs/core';
import { createPostgresQueue } from '@jobs/queue-postgres';
import { createStore, grantAppRole, migrations, scramVerifier } from '@jobs/store';
import { handler } from '../functions/migrate';
import { lambdaContext } from './fixtures/events';
import { engine } from './support/engine';
import { jobSpec } from './support/fixtures';
import { DATABASE_URL, eventually, schemaUrl, uniqueName, type TestEnv } from './support/env';

const id = uniqueName('role').toLowerCase();
const schema = id;
const owner = `${id}_owner`;
const app = `${id}_app`;
const password = randomBytes(24).toString('base64url');
const as = (user: string) => {
  const url = new URL(DATABASE_URL);
  url.username = user;
  return schemaUrl(schema, url.toString());
};

let admin: pg.Client;
let appPool: pg.Pool;
let ownerPool: pg.Pool;
const saved = { ...process.env };
const migrateAsOwner = (appPassword = password) => {
  Object.assign(process.env, {
    DATABASE_URL: as(owner),
    DATABASE_APP_ROLE: app,
    DATABASE_APP_PASSWORD: appPassword,
    LOG_LEVEL: 'silent',
  });
  return handler({ source: 'deploy' }, lambdaContext({ functionName: 'Migrate', timeoutMs: 300_000 }));
};

beforeAll(async () => {
  admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  // What RDS gives its master user: login, CREATEROLE, owner of the database's schema; no superuser.
  await admin.query(`CREATE ROLE ${owner} LOGIN CREATEROLE`);
  await admin.query(`CREATE SCHEMA ${schema} AUTHORIZATION ${owner}`);
  ownerPool = new pg.Pool({ connectionString: as(owner), max: 2 });
});

afterAll(async () => {
  process.env = { ...saved };
  await appPool?.end();
  await ownerPool.end();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  for (const role of [app, `${id}_wide`, owner]) {
    await admin.query(`DROP OWNED BY ${role}`).catch(() => undefined);
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
  }
  await admin.end();
});

describe('the application role', () => {
  it('is created by the migration step, as the owner, with login and no power beyond its grants', async () => {
    const summary = await migrateAsOwner();
    expect(summary.applied).toEqual(migrations().map((m) => m.version));
    expect(summary.appRole).toBe(app);
    const { rows } = await admin.query(
      `SELECT rolcanlogin, rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls,
              left(rolpassword, 19) AS stored
         FROM pg_authid WHERE rolname = $1`,
      [app],
    );
    expect(rows).toEqual([
      {
        rolcanlogin: true,
        rolsuper: false,
        rolcreaterole: false,
        rolcreatedb: false,
        rolreplication: false,
        rolbypassrls: false,
        stored: 'SCRAM-SHA-256$4096:',
      },
    ]);
    // Every table: rows only, no TRUNCATE, REFERENCES or TRIGGER, and owned by the migrations' user.
    const tables = await admin.query<{ name: string; owner: string; dml: boolean; more: boolean }>(
      `SELECT c.relname AS name, pg_get_userbyid(c.relowner) AS owner,
              has_table_privilege($1, c.oid, 'SELECT, INSERT, UPDATE, DELETE') AND
                has_table_privilege($1, c.oid, 'SELECT') AND has_table_privilege($1, c.oid, 'INSERT') AND
                has_table_privilege($1, c.oid, 'UPDATE') AND has_table_privilege($1, c.oid, 'DELETE') AS dml,
              has_table_privilege($1, c.oid, 'TRUNCATE, REFERENCES, TRIGGER') AS more
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $2 AND c.relkind IN ('r', 'p')`,
      [app, schema],
    );
    expect(tables.rows.length).toBeGreaterThan(10);
    for (const t of tables.rows) expect(t, t.name).toMatchObject({ owner, dml: true, more: false });
    const functions = await admin.query<{ name: string; ok: boolean }>(
      `SELECT p.proname AS name, has_function_privilege($1, p.oid, 'EXECUTE') AS ok
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $2`,
      [app, schema],
    );
    expect(functions.rows.map((f) => f.name)).toEqual(expect.arrayContaining(['queue_claim', 'queue_settle']));
    for (const f of functions.rows) expect(f.ok, f.name).toBe(true);
  });

  it("runs a job's life on the PostgreSQL queue: create, trigger, claim, run, settle, tick, reap, pause, delete", async () => {
    appPool = new pg.Pool({ connectionString: as(app), max: 10 });
    appPool.on('error', () => undefined);
    expect((await appPool.query('SELECT current_user AS me')).rows[0].me).toBe(app);
    const store = createStore(appPool);
    const queue: QueueAdapter = createPostgresQueue(appPool);
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    await restoreFlow({ store, queue, logger: quiet });
    const e = engine({ store, queue } as TestEnv);
    try {
      const job = await createJob(e.deps, jobSpec({ limits: { ...NO_LIMITS, maxConcurrency: 1 } }));
      const { execution } = await triggerJob(e.deps, { jobId: job.id });
      await e.worker({ lanes: ['short'] });
      await eventually(async () => (await store.executionGet(execution.id))?.status === 'succeeded');
      await e.tick();
      await e.reap();
      await e.reconcile();
      await pauseJob(e.deps, job.id);
      await resumeJob(e.deps, job.id);
      await deleteJob(e.deps, job.id);
      expect(await store.jobGet(job.id)).toBeNull();
    } finally {
      await e.stopAll();
      await queue.close();
    }
  });

  it('cannot create, alter, truncate or drop a table, nor create a function', async () => {
    const denied = [
      'CREATE TABLE intruder (id int)',
      'ALTER TABLE jobs ADD COLUMN intruder int',
      'DROP TABLE executions',
      'TRUNCATE executions',
      'CREATE INDEX intruder ON jobs (name)',
      "CREATE FUNCTION intruder() RETURNS int LANGUAGE sql AS 'SELECT 1'",
    ];
    for (const sql of denied)
      await expect(appPool.query(sql), sql).rejects.toThrow(/permission denied|must be owner|no privileges/);
  });

  it('is brought up to date by every later deploy: a new password, the same grants', async () => {
    const before = (await admin.query('SELECT rolpassword FROM pg_authid WHERE rolname = $1', [app])).rows[0];
    const summary = await migrateAsOwner(`${password}-next`);
    expect(summary).toMatchObject({ applied: [], appRole: app });
    const after = (await admin.query('SELECT rolpassword FROM pg_authid WHERE rolname = $1', [app])).rows[0];
    expect(after.rolpassword).not.toBe(before.rolpassword);
    const { rows } = await admin.query(`SELECT has_table_privilege($1, $2, 'UPDATE') AS ok`, [app, `${schema}.jobs`]);
    expect(rows[0].ok).toBe(true);
  });

  it('refuses a role that exists with more power, the migrations user itself, and a weak password', async () => {
    await admin.query(`CREATE ROLE ${id}_wide LOGIN CREATEDB`);
    await expect(grantAppRole(ownerPool, { name: `${id}_wide`, password })).rejects.toThrow(
      /exists with rolcreatedb; the application role may have none of them/,
    );
    await expect(grantAppRole(ownerPool, { name: owner, password })).rejects.toThrow(/must not be the user/);
    await expect(grantAppRole(ownerPool, { name: app, password: 'short' })).rejects.toThrow(/12-200 printable/);
    await expect(migrateAsOwner('has whitespace inside')).rejects.toThrow(/DATABASE_APP_PASSWORD/);
  });
});

describe('scramVerifier', () => {
  // PostgreSQL's server side of SCRAM-SHA-256 (RFC 5802), checking pg's own client against the stored verifier.
  it("stores what PostgreSQL's SCRAM exchange with pg's client accepts, and nothing else", async () => {
    const sasl = createRequire(import.meta.url)('pg/lib/crypto/sasl.js') as {
      startSession(mechanisms: string[]): { clientNonce: string; response: string; serverSignature?: string };
      continueSession(session: object, password: string, serverFirst: string): Promise<void>;
      finalizeSession(session: object, serverFinal: string): void;
    };
    const verifier = scramVerifier(password);
    const [, iterations, salt, storedKey, serverKey] = /^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)$/.exec(verifier)!;
    const login = async (attempt: string) => {
      const session = sasl.startSession(['SCRAM-SHA-256']);
      const clientFirstBare = session.response.slice(3);
      const serverFirst = `r=${session.clientNonce}${randomBytes(18).toString('base64')},s=${salt},i=${iterations}`;
      await sasl.continueSession(session, attempt, serverFirst);
      const clientFinal = session.response;
      const withoutProof = clientFinal.slice(0, clientFinal.lastIndexOf(',p='));
      const authMessage = `${clientFirstBare},${serverFirst},${withoutProof}`;
      const proof = Buffer.from(clientFinal.slice(clientFinal.lastIndexOf(',p=') + 3), 'base64');
      const signature = createHmac('sha256', Buffer.from(storedKey!, 'base64')).update(authMessage).digest();
      const clientKey = Buffer.from(proof.map((byte, i) => byte ^ signature[i]!));
      if (createHash('sha256').update(clientKey).digest('base64') !== storedKey) return false;
      const serverSignature = createHmac('sha256', Buffer.from(serverKey!, 'base64')).update(authMessage).digest();
      sasl.finalizeSession(session, `v=${serverSignature.toString('base64')}`);
      return true;
    };
    expect(await login(password)).toBe(true);
    expect(await login(`${password}x`)).toBe(false);
    expect(scramVerifier(password)).not.toBe(verifier);
  });
});
