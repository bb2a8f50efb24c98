/**
 * A validating proxy over the API: a workload through every operation of the OpenAPI document (packages/client/
 * openapi.json), successes and errors alike (no key, a role too low, unknown ids, bad queries and bodies, a body of
 * the wrong type or too large, conflicts, an idempotency mismatch, the database away, too many wrong keys), where
 * every response's status must be one the operation declares and its JSON body must validate against the schema
 * declared for that status. A status or body the document does not declare is a contract violation for generated
 * clients.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import Ajv2020 from 'ajv/dist/2020.js';
import { createApp } from '@jobs/api';
import { createStore } from '@jobs/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recorder } from '../support/env';
import { ROOT } from '../support/processes';
import { bearer, ROLE_KEYS } from '../support/role-keys';
import { apiHarness, type Harness } from './harness';

interface Operation {
  method: string;
  template: string;
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
  body: boolean;
  query: string[];
}

const doc = JSON.parse(readFileSync(join(ROOT, 'packages/client/openapi.json'), 'utf8'));
const operations: Operation[] = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(
  ([template, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      template,
      responses: op.responses,
      body: op.requestBody !== undefined,
      query: (op.parameters ?? []).filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name),
    })),
);

const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
ajv.addFormat('uri', /^[a-z][a-z0-9+.-]*:/i);
ajv.addSchema({ $id: 'doc', components: doc.components });
const validators = new Map<object, ReturnType<typeof ajv.compile>>();
function validatorOf(schema: object) {
  let v = validators.get(schema);
  if (!v) {
    const rewritten = JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"doc#/components/'));
    v = ajv.compile(rewritten);
    validators.set(schema, v);
  }
  return v;
}

/** Every violation seen, and every (operation, status) pair answered. */
const violations: string[] = [];
const seen = new Map<string, Set<number>>();

async function check(op: Operation, res: Response, label: string): Promise<number> {
  const key = `${op.method} ${op.template}`;
  const statuses = seen.get(key) ?? new Set<number>();
  statuses.add(res.status);
  seen.set(key, statuses);
  const declared = op.responses[String(res.status)] ?? op.responses.default;
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  if (!declared) {
    violations.push(`${key} (${label}): undeclared status ${res.status}: ${text.slice(0, 200)}`);
    return res.status;
  }
  if (!type.includes('application/json')) return res.status;
  const schema = declared.content?.['application/json']?.schema;
  if (!schema) {
    violations.push(`${key} (${label}): ${res.status} answered JSON, the document declares no JSON body`);
    return res.status;
  }
  const validate = validatorOf(schema as object);
  if (!validate(JSON.parse(text)))
    violations.push(
      `${key} (${label}): ${res.status} body does not match: ${ajv.errorsText(validate.errors)}: ${text.slice(0, 300)}`,
    );
  return res.status;
}

let h: Harness;
let ids: Record<string, string>;
const admin = bearer('admin');

function pathOf(op: Operation, over: Record<string, string> = {}): string {
  // A delete only ever reaches its own job, whatever the request's other parts.
  if (op.method === 'DELETE') over = { id: ids.doomed!, ...over };
  return op.template.replace(
    /\{(\w+)\}/g,
    (_, name: string) => over[name] ?? ids[`${op.template}:${name}`] ?? ids[name]!,
  );
}

async function send(
  op: Operation,
  label: string,
  init: { path?: string; headers?: Record<string, string>; body?: string; query?: string },
  app: { request: Harness['app']['request'] } = h.app,
): Promise<number> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.body !== undefined && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type'))
    headers['content-type'] = 'application/json';
  const res = await app.request(`${init.path ?? pathOf(op)}${init.query ? `?${init.query}` : ''}`, {
    method: op.method,
    headers,
    body: init.body,
  });
  return check(op, res, label);
}

/** A body each operation takes (its happy path). */
function goodBody(op: Operation): string | undefined {
  const bodies: Record<string, unknown> = {
    'POST /api/v1/jobs': {
      name: `made-${Math.random().toString(36).slice(2)}`,
      command: 'echo hi',
      cron_expr: '@daily',
    },
    'PATCH /api/v1/jobs/{id}': { cron_expr: '@hourly' },
    'PUT /api/v1/jobs/by-name/{name}': { command: 'echo put', cron_expr: '@daily' },
    'POST /api/v1/jobs/by-name/{name}/plan': { command: 'echo plan', cron_expr: '@daily' },
    'POST /api/v1/jobs/{id}/trigger': { payload: { n: 1 } },
    'POST /api/v1/jobs/{id}/backfill': { from: '2025-01-01T00:00:00Z', to: '2025-01-03T00:00:00Z', dry_run: true },
    'POST /api/v1/executions/{id}/replay': { force: true },
  };
  const body = bodies[`${op.method} ${op.template}`];
  return body === undefined ? (op.body ? '{}' : undefined) : JSON.stringify(body);
}

beforeAll(async () => {
  h = await apiHarness({ apiKeys: ROLE_KEYS });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await h.call(method, path, { body, headers: admin });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const job = await call('POST', '/api/v1/jobs', { name: 'proxy', command: 'echo hi', cron_expr: '@daily' });
  const execution = await call('POST', `/api/v1/jobs/${job.id}/trigger`, {});
  const doomed = await call('POST', '/api/v1/jobs', { name: 'proxy-doomed', command: 'true' });
  await call('PUT', '/api/v1/jobs/by-name/proxy-named', { command: 'true' });
  ids = {
    id: job.id,
    name: 'proxy-named',
    lane: 'short',
    doomed: doomed.id,
    '/api/v1/executions/{id}:id': execution.id,
    '/api/v1/executions/{id}/cancel:id': execution.id,
    '/api/v1/executions/{id}/replay:id': execution.id,
    '/api/v1/executions/{id}/output:id': execution.id,
    '/api/v1/jobs/{id}:id': job.id,
  };
});
afterAll(() => h?.cleanup());

describe('every response of every operation matches the OpenAPI document', () => {
  it('covers the operations the document lists', () => {
    expect(operations.length).toBeGreaterThan(25);
  });

  it('successes, missing and wrong keys, roles too low, unknown ids and bad input', async () => {
    for (const op of operations) {
      const body = goodBody(op);
      const isHealth = op.template === '/healthz';
      // No key, a wrong key: 401 (GET /healthz is open).
      await send(op, 'no key', { body });
      // A read key: 403 on everything but reads.
      await send(op, 'read key', { headers: bearer('read'), body });
      if (isHealth) continue;
      // Bad input: a query parameter out of range, an unknown body field, a body that is not JSON.
      for (const q of op.query) await send(op, `bad ${q}`, { headers: admin, body, query: `${q}=%00` });
      await send(op, 'limit', { headers: admin, body, query: 'limit=0' });
      if (op.body) {
        await send(op, 'unknown field', { headers: admin, body: JSON.stringify({ nope: 1 }) });
        await send(op, 'not JSON', { headers: admin, body: '{' });
        await send(op, 'wrong type', { headers: { ...admin, 'content-type': 'text/plain' }, body: 'hi' });
        await send(op, 'too large', { headers: admin, body: JSON.stringify({ x: 'y'.repeat(300 * 1024) }) });
      }
      // Unknown ids, malformed ids.
      if (/\{id\}/.test(op.template)) {
        await send(op, 'unknown id', { headers: admin, body, path: pathOf(op, { id: '424242' }) });
        await send(op, 'malformed id', { headers: admin, body, path: pathOf(op, { id: 'abc' }) });
      }
      if (/\{lane\}/.test(op.template))
        await send(op, 'unknown lane', { headers: admin, body, path: pathOf(op, { lane: 'nope' }) });
      // The happy path (a delete goes to its own job).
      const path = undefined;
      await send(op, 'ok', {
        headers: admin,
        body,
        path,
        query: op.template.endsWith('/preview') ? 'cron_expr=%40daily' : undefined,
      });
    }
    expect(violations).toEqual([]);
  });

  it('conflicts and an idempotency mismatch', async () => {
    const find = (method: string, template: string) =>
      operations.find((o) => o.method === method && o.template === template)!;
    const create = find('POST', '/api/v1/jobs');
    expect(
      await send(create, 'duplicate', { headers: admin, body: JSON.stringify({ name: 'proxy', command: 'true' }) }),
    ).toBe(409);
    const trigger = find('POST', '/api/v1/jobs/{id}/trigger');
    const keyed = { ...admin, 'Idempotency-Key': 'proxy-key' };
    expect(await send(trigger, 'keyed', { headers: keyed, body: JSON.stringify({ payload: { a: 1 } }) })).toBe(201);
    expect(await send(trigger, 'keyed again', { headers: keyed, body: JSON.stringify({ payload: { a: 1 } }) })).toBe(
      200,
    );
    expect(await send(trigger, 'mismatch', { headers: keyed, body: JSON.stringify({ payload: { a: 2 } }) })).toBe(422);
    const cancel = find('POST', '/api/v1/executions/{id}/cancel');
    const replay = find('POST', '/api/v1/executions/{id}/replay');
    // The execution was cancelled by the first pass: cancelling again and replaying a cancelled one conflict.
    await send(cancel, 'cancel again', { headers: admin });
    await send(replay, 'replay without force', { headers: admin, body: '{}' });
    const patch = find('PATCH', '/api/v1/jobs/{id}');
    await send(patch, 'rename onto another', { headers: admin, body: JSON.stringify({ name: 'proxy-named' }) });
    expect(violations).toEqual([]);
  });

  it('every operation while the database is away (503)', async () => {
    const pool = new pg.Pool({
      connectionString: 'postgres://postgres@127.0.0.1:1/postgres',
      connectionTimeoutMillis: 300,
    });
    pool.on('error', () => undefined);
    const rec = recorder();
    const away = createApp({
      ...h.deps,
      store: createStore(pool),
      sink: rec.sink,
      logger: rec.logger,
    });
    try {
      for (const op of operations) {
        if (op.template === '/healthz') continue;
        await send(op, 'database away', { headers: admin, body: goodBody(op) }, away);
      }
      expect([...seen.values()].some((s) => s.has(503))).toBe(true);
    } finally {
      await pool.end();
    }
    expect(violations).toEqual([]);
  });

  it('too many wrong keys from one address (429), then every status answered was declared', async () => {
    const jobs = operations.find((o) => o.method === 'GET' && o.template === '/api/v1/jobs')!;
    let last = 0;
    for (let i = 0; i < 15; i++)
      last = await send(jobs, 'wrong key', { headers: { Authorization: 'Bearer wrong-key-0123456789' } });
    expect(last).toBe(429);
    for (const op of operations) await send(op, 'limited', { headers: admin, body: goodBody(op) });
    expect(violations).toEqual([]);
    // Every operation answered, and the error statuses the issue names were all seen somewhere.
    expect([...seen.keys()].sort()).toEqual(operations.map((o) => `${o.method} ${o.template}`).sort());
    const all = new Set([...seen.values()].flatMap((s) => [...s]));
    for (const status of [400, 401, 403, 404, 409, 413, 415, 422, 429, 503])
      expect(all.has(status), String(status)).toBe(true);
  });
});
