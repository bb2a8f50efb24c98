/**
 * A pooled connection that died while the process was frozen (a Lambda container between invocations, RDS Proxy
 * closing idle clients): the next request must still be answered. The freeze is real: the event loop is blocked by
 * a synchronous child process that terminates the connection's backend (pg_terminate_backend), so the pool cannot
 * notice before the next query goes out on the dead socket, exactly as in a thawed container.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import type { LambdaEvent } from 'hono/aws-lambda';
import type { APIGatewayProxyEventV2, APIGatewayProxyResult } from 'aws-lambda';
import { StorePool, idempotent, type StorePoolEvent } from '@jobs/store';
import { FIXTURE_API_KEY, FIXTURE_HOST, lambdaContext } from '../fixtures/events';
import { APIGW_HOST, httpApiEvent } from '../api/apigw-event';
import { DATABASE_URL, uniqueName } from '../support/env';
import { ROOT } from '../support/processes';
import { lambdaTestEnv, type LambdaTestEnv } from './harness';

let env: LambdaTestEnv;
let api: typeof import('../../functions/api');
const appName = uniqueName('stale');

const auth = { authorization: `Bearer ${FIXTURE_API_KEY}`, 'content-type': 'application/json' };
const invoke = async (event: APIGatewayProxyEventV2) =>
  (await api.handler(
    event as unknown as LambdaEvent,
    lambdaContext({ functionName: 'ApiHandler', timeoutMs: 25_000 }),
  )) as APIGatewayProxyResult;

/**
 * Terminates every backend of `application` from a child process while this process's event loop stands still,
 * after `frozenMs` of the freeze have passed. Returns how many backends it ended.
 */
function terminateWhileFrozen(application: string, frozenMs = 0): number {
  const script = `
    import pg from 'pg';
    await new Promise((r) => setTimeout(r, ${frozenMs}));
    const c = new pg.Client({ connectionString: process.env.URL });
    await c.connect();
    // The timeout makes it wait until the backend is gone, not just signalled.
    const r = await c.query('SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE application_name = $1', [process.env.APP]);
    await c.end();
    process.stdout.write(String(r.rowCount));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', URL: DATABASE_URL, APP: application },
  });
  return Number(out.toString());
}

function withApplication(url: string, application: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('application_name', application);
  return parsed.toString();
}

beforeAll(async () => {
  env = await lambdaTestEnv('lstale', { API_KEYS: FIXTURE_API_KEY, ALLOWED_HOSTS: `${FIXTURE_HOST},${APIGW_HOST}` });
  await env.setEnv({ DATABASE_URL: withApplication(env.childEnv.DATABASE_URL!, appName) });
  api = await import('../../functions/api');
});
afterAll(async () => {
  await api.closeApi();
  await env.cleanup();
});

describe('API Lambda after its connection was closed under it', () => {
  it('answers the next read: the query is sent again on a new connection', async () => {
    const job = await env.job({ name: 'stale-read', command: 'true' });
    expect(
      (await invoke(httpApiEvent({ method: 'GET', path: `/api/v1/jobs/${job.id}`, headers: auth }))).statusCode,
    ).toBe(200);

    expect(terminateWhileFrozen(appName)).toBe(1);
    const res = await invoke(httpApiEvent({ method: 'GET', path: `/api/v1/jobs/${job.id}`, headers: auth }));
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body).name).toBe('stale-read');
  });

  it('answers a trigger with 503 instead of risking a second row, and the retry with its key creates one execution', async () => {
    const job = await env.job({ command: 'true' });
    const trigger = () =>
      invoke(
        httpApiEvent({
          method: 'POST',
          path: `/api/v1/jobs/${job.id}/trigger`,
          headers: { ...auth, 'idempotency-key': 'after-freeze' },
          body: '{}',
        }),
      );
    expect((await invoke(httpApiEvent({ method: 'GET', path: '/api/v1/jobs', headers: auth }))).statusCode).toBe(200);

    expect(terminateWhileFrozen(appName)).toBe(1);
    const first = await trigger();
    expect(first.statusCode).toBe(503);
    expect(first.headers?.['retry-after']).toBe('1');
    expect(JSON.parse(first.body).error.code).toBe('unavailable');

    const again = await trigger();
    expect(again.statusCode).toBe(201);
    const { rows } = await env.pool.query('SELECT count(*)::int AS n FROM executions WHERE job_id = $1', [job.id]);
    expect(rows[0].n).toBe(1);
  });
});

describe('StorePool', () => {
  const pools: StorePool[] = [];
  const pool = (application: string, options: { idleTimeoutMillis?: number; unnamedStatements?: boolean } = {}) => {
    const events: StorePoolEvent[] = [];
    const p = new StorePool({
      connectionString: withApplication(env.childEnv.DATABASE_URL!, application),
      max: 1,
      idleTimeoutMillis: options.idleTimeoutMillis ?? 30_000,
      unnamedStatements: options.unnamedStatements,
      onEvent: (e) => events.push(e),
    });
    p.on('error', () => undefined);
    pools.push(p);
    return { p, events };
  };
  afterAll(async () => {
    for (const p of pools) await p.end();
  });

  it('replaces a connection idle longer than its idle timeout by the wall clock, before a write goes out on it', async () => {
    const name = uniqueName('evict');
    const { p, events } = pool(name, { idleTimeoutMillis: 300 });
    await p.query('SELECT 1');
    // Frozen for 600 ms, during which the backend is ended: pg's idle timer never got to run.
    expect(terminateWhileFrozen(name, 600)).toBe(1);
    await p.query(
      'INSERT INTO workers (id, kind, host, lanes, concurrency, in_flight, version, started_at) VALUES ($1, $2, $3, $4, 1, 0, $5, now())',
      [name, 'local', 'h', ['short'], 'v'],
    );
    expect(events.map((e) => e.event)).toEqual(['db.stale_connection_closed']);
    expect(events[0]!.idle_ms).toBeGreaterThanOrEqual(600);
  });

  it('sends a write once only, but a write marked idempotent twice, when the connection died under it', async () => {
    const name = uniqueName('retry');
    const { p, events } = pool(name);
    await p.query('SELECT 1');
    expect(terminateWhileFrozen(name)).toBe(1);
    await expect(
      p.query(
        `INSERT INTO workers (id, kind, host, lanes, concurrency, in_flight, version, started_at) VALUES ($1, 'local', 'h', '{short}', 1, 0, 'v', now())`,
        [name],
      ),
    ).rejects.toMatchObject({
      code: '57P01',
    });
    expect(events).toEqual([]);
    expect((await p.query('SELECT count(*)::int AS n FROM workers WHERE id = $1', [name])).rows[0].n).toBe(0);

    expect(terminateWhileFrozen(name)).toBe(1);
    await p.query(
      idempotent({
        text: `INSERT INTO workers (id, kind, host, lanes, concurrency, in_flight, version, started_at) VALUES ($1, 'local', 'h', '{short}', 1, 0, 'v', now()) ON CONFLICT (id) DO NOTHING`,
        values: [name],
      }),
    );
    expect(events.map((e) => e.event)).toEqual(['db.query_retried']);
    expect((await p.query('SELECT count(*)::int AS n FROM workers WHERE id = $1', [name])).rows[0].n).toBe(1);
  });

  it('leaves no prepared statement in the session when statements are unnamed', async () => {
    const statement = { name: 'stale_test_probe', text: 'SELECT $1::int AS n', values: [7] };
    const prepared = async (p: StorePool) =>
      (await p.query('SELECT name FROM pg_prepared_statements')).rows.map((r: { name: string }) => r.name);
    const named = pool(uniqueName('named')).p;
    expect((await named.query(statement)).rows).toEqual([{ n: 7 }]);
    expect(await prepared(named)).toEqual(['stale_test_probe']);
    const unnamed = pool(uniqueName('unnamed'), { unnamedStatements: true }).p;
    expect((await unnamed.query(statement)).rows).toEqual([{ n: 7 }]);
    expect((await unnamed.query(statement)).rows).toEqual([{ n: 7 }]);
    expect(await prepared(unnamed)).toEqual([]);
    // A transaction's client is the same wrapped connection.
    const client = await unnamed.connect();
    await client.query(statement);
    client.release();
    expect(await prepared(unnamed)).toEqual([]);
  });
});
