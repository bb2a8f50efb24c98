/**
 * 8. Hostile HTTP input against the running API (functions/local.ts with API_KEYS set): thousands of malformed,
 * oversized, deeply nested, wrong-typed and injection-laden requests to every endpoint, auth bypass attempts, and
 * protocol-level garbage on a raw socket. Every request must be answered (within 10 s) with a 4xx, or, where the
 * random input happens to be valid, a 2xx; never a 5xx. Whatever was accepted must read back exactly as sent:
 * names (trimmed, as documented), commands, schedules, time zones and payload strings, byte for byte.
 * The server stays up (healthz ok at the end) and the books balance.
 *
 * Safety: commands run through /bin/sh on this machine. A generated body with a command is made manual-only (no
 * cron_expr or run_at), and triggers only target the seeded handler jobs or ids that cannot exist, so no
 * generated command ever runs. The API process registers only the builtin handlers.
 */
import fc from 'fast-check';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { checkBooks } from '../books';
import { createScenario, sleep, type Ack, type ApiClient } from '../harness';
import {
  changesRoute,
  cronExpr,
  deepJson,
  HOSTILE_STRINGS,
  HOSTILE_WITH_CONTROLS,
  idText,
  isoish,
  jobBody,
  LONE_SURROGATES,
  nameText,
  queryValue,
  timezone,
  triggerBody,
} from '../hostile';
import { verdict, type ScenarioDef } from '../types';

const KEYS = ['k-fuzz-Alpha_1-0123', 'k-fuzz-Beta_2-01234'];
const BODY_LIMIT = 262_144;

type Expect = 'reject' | 'unauth' | 'any';

interface Case {
  label: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  expect: Expect;
  /** Without the API key (auth cases); default: with it. */
  noAuth?: boolean;
  /** The parsed body of a job create, for the read-back check when it is accepted. */
  create?: Record<string, unknown>;
  /** A trigger that may be acknowledged. */
  trigger?: boolean;
}

interface Outcome {
  c: Case;
  status: number | 'timeout' | 'unsendable' | 'error';
  body: any;
  text: string;
}

/** Equal JSON values: same types, same strings code unit for code unit, same keys (order aside). */
function sameJson(a: unknown, b: unknown, depth = 0): boolean {
  if (depth > 200) return false;
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null) return false;
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, (b as unknown[])[i], depth + 1));
  if (typeof a === 'object') {
    const ka = Object.keys(a as object).sort();
    const kb = Object.keys(b as object).sort();
    return (
      ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameJson((a as any)[k], (b as any)[k], depth + 1))
    );
  }
  return false;
}

/** JSON text with own `__proto__` keys kept (JSON.stringify keeps them when they are own properties). */
function json(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

/** A generated create body that cannot schedule a shell command. */
function safe(body: Record<string, unknown>): Record<string, unknown> {
  if (body.command !== undefined && body.command !== null) {
    delete body.cron_expr;
    delete body.run_at;
  }
  if (
    typeof body.handler === 'string' &&
    !['noop', 'sleep'].includes(body.handler) &&
    (body.cron_expr || body.run_at)
  ) {
    // An unknown handler on a schedule just fails; keep the schedule but never name a fixture handler.
    body.handler = 'no-such-handler';
  }
  return body;
}

function enc(id: string, raw: boolean): string {
  return raw ? id.replace(/[/?#]/g, encodeURIComponent) : encodeURIComponent(id);
}

async function send(base: string, c: Case, fresh = false): Promise<Outcome> {
  const headers: Record<string, string> = { ...(c.headers ?? {}) };
  if (!c.noAuth && !Object.keys(headers).some((h) => h.toLowerCase() === 'authorization'))
    headers.authorization = `Bearer ${KEYS[0]}`;
  if (c.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
    headers['content-type'] = 'application/json';
  // Concatenated, not resolved: `new URL('//api/v1/jobs', base)` would be a different host.
  const url = base + c.path;
  try {
    const res = await fetch(url, {
      method: c.method,
      headers,
      body: c.body,
      signal: AbortSignal.timeout(10_000),
      redirect: 'manual',
    });
    const text = await res.text();
    let body: any = null;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    return { c, status: res.status, body, text };
  } catch (error) {
    const e = error as Error & { cause?: Error };
    if (e.name === 'TimeoutError') return { c, status: 'timeout', body: null, text: '' };
    // fetch refuses to send some inputs (invalid header bytes, forbidden methods): nothing reached the server.
    if (
      e.name === 'TypeError' &&
      (!/fetch failed/.test(e.message) ||
        /invalid .*header|header .*invalid|Invalid header/i.test(e.cause?.message ?? ''))
    ) {
      return { c, status: 'unsendable', body: null, text: `${e.message} ${e.cause?.message ?? ''}` };
    }
    // A pooled keep-alive connection the server had just closed: try once more (the pool drops dead sockets).
    if (!fresh && /other side closed|ECONNRESET|socket hang up/.test(`${e.message} ${e.cause?.message}`))
      return send(base, c, true);
    return { c, status: 'error', body: null, text: `${e.message} ${e.cause?.message ?? ''}` };
  }
}

/** Sends raw bytes on a socket; returns the status codes of every response read within `waitMs`. */
function raw(port: number, bytes: Buffer | string, waitMs = 1500): Promise<{ statuses: number[]; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    let closed = false;
    const finish = () => {
      socket.destroy();
      resolve({ statuses: [...data.matchAll(/HTTP\/1\.[01] (\d{3})/g)].map((m) => Number(m[1])), closed });
    };
    const timer = setTimeout(finish, waitMs);
    socket.on('data', (d) => (data += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      clearTimeout(timer);
      finish();
    });
    socket.write(bytes);
  });
}

export const fuzz: ScenarioDef = {
  name: 'hostile-http-fuzz',
  async run(ctx) {
    const s = await createScenario(ctx.servers, 'hostile-http-fuzz', ctx.logRoot);
    try {
      const { proc: api, client } = await s.api({
        API_KEYS: KEYS.join(','),
        // Its hundreds of wrong keys all come from 127.0.0.1: the default limit would answer the rest of the run 429.
        AUTH_FAILURE_LIMIT: '1000000',
        HANDLERS_MODULE: '',
        WORKER_CONCURRENCY: '8',
      });
      s.spawn('scheduler');
      const base = client.base;
      const port = Number(new URL(base).port);
      const seedNoop = await client.createJob({ name: 'seed-noop', handler: 'noop', max_retries: 1 });
      const seedSleep = await client.createJob({ name: 'seed-sleep', handler: 'sleep', payload: { ms: 5 } });
      // Method fuzzing may DELETE this one; the seeds above must survive.
      const sacrificial = await client.createJob({ name: 'seed-sacrificial', handler: 'noop' });
      const seedExec = await client.request('POST', `/api/v1/jobs/${seedNoop.id}/trigger`, { body: {} });
      const execId = String(seedExec.body?.id ?? '1');
      const seedJobs = [seedNoop.id, seedSleep.id];
      const seed = ctx.seed + 8;
      const sample = <T>(arb: fc.Arbitrary<T>, n: number, salt: number) =>
        fc.sample(arb, { numRuns: n, seed: seed + salt });
      const cases: Case[] = [];

      // ---- authentication: every route, no key or a wrong one, plus path and header tricks
      const routes: [string, string][] = [
        ['GET', '/api/v1/jobs'],
        ['POST', '/api/v1/jobs'],
        ['GET', `/api/v1/jobs/${seedNoop.id}`],
        ['DELETE', `/api/v1/jobs/${seedNoop.id}`],
        ['POST', `/api/v1/jobs/${seedNoop.id}/trigger`],
        ['POST', `/api/v1/jobs/${seedNoop.id}/pause`],
        ['POST', `/api/v1/jobs/${seedNoop.id}/resume`],
        ['GET', `/api/v1/jobs/${seedNoop.id}/executions`],
        ['GET', '/api/v1/executions'],
        ['GET', `/api/v1/executions/${execId}`],
        ['POST', `/api/v1/executions/${execId}/cancel`],
        ['POST', `/api/v1/executions/${execId}/replay`],
        ['GET', '/api/v1/workers'],
        ['GET', '/api/v1/stats'],
        ['GET', '/api/v1/schedules/preview?cron_expr=*+*+*+*+*'],
        ['GET', '/api/v1/openapi.json'],
      ];
      const badAuth = fc.oneof(
        fc.constant<Record<string, string>>({}),
        fc.constantFrom<Record<string, string>>(
          { authorization: '' },
          { authorization: 'Bearer' },
          { authorization: 'Bearer ' },
          { authorization: `Bearer ${KEYS[0]}x` },
          { authorization: `Bearer ${KEYS[0]!.slice(0, -1)}` },
          { authorization: `Bearer ${KEYS[0]} ${KEYS[1]}` },
          { authorization: `Bearer ${KEYS.join(',')}` },
          { authorization: `Basic ${Buffer.from(`${KEYS[0]}:`).toString('base64')}` },
          { authorization: `Token ${KEYS[0]}` },
          { authorization: KEYS[0]! },
          { authorization: `Bearer ${Buffer.from(KEYS[0]!).toString('base64')}` },
          { authorization: 'Bearer null' },
          { authorization: 'Bearer undefined' },
          { authorization: `Bearer ${'a'.repeat(8000)}` },
          { 'x-api-key': KEYS[0]! },
          { cookie: `authorization=Bearer ${KEYS[0]}` },
          { 'x-forwarded-user': 'admin', 'x-original-url': '/healthz', 'x-rewrite-url': '/healthz' },
          { 'x-http-method-override': 'GET', authorization: 'Bearer nope' },
        ),
        fc.string({ unit: 'binary-ascii', maxLength: 60 }).map((t) => ({ authorization: `Bearer ${t}` })),
      );
      const pathTrick = fc.constantFrom(
        (p: string) => p,
        (p: string) => p.toUpperCase(),
        (p: string) => p.replace('/api/v1/', '/api/v1//'),
        (p: string) => `/${p}`,
        (p: string) => p.replace('/api/v1/', '/api/v1/./'),
        (p: string) => p.replace('/api/v1/', '/api/v1/%2e/'),
        (p: string) => p.replace('/api/v1/', '/api/v1%2f'),
        (p: string) => p.replace('/api/v1/', '/api/%761/'),
        (p: string) => `${p}/`,
        (p: string) => `${p}%00`,
        (p: string) => `${p};x=1`,
        (p: string) => `/healthz/../..${p}`,
        (p: string) => `${p}?authorization=Bearer%20${KEYS[0]}`,
      );
      for (const [[method, path], headers, trick] of sample(
        fc.tuple(fc.constantFrom(...routes), badAuth, pathTrick),
        350,
        1,
      )) {
        const body = method === 'POST' ? json({ name: `auth-${cases.length}`, handler: 'noop' }) : undefined;
        cases.push({ label: 'auth', method, path: trick(path), headers, body, expect: 'unauth', noAuth: true });
      }

      // ---- job creation: structured bodies with wrong types, hostile strings, unknown keys, lone surrogates
      for (const body of sample(jobBody, 1000, 2)) {
        const b = safe(body);
        cases.push({ label: 'create', method: 'POST', path: '/api/v1/jobs', body: json(b), expect: 'any', create: b });
      }
      // Broken JSON: truncated, trailing garbage, JS-only literals, BOM, wrong top-level types.
      const brokenJson = fc.tuple(
        jobBody,
        fc.nat(),
        fc.constantFrom('trunc', 'garbage', 'literal', 'bom', 'toplevel', 'single', 'comment', 'dup'),
      );
      for (const [body, n, how] of sample(brokenJson, 250, 3)) {
        const text = json(safe(body));
        const variants: Record<string, string> = {
          trunc: text.slice(0, n % Math.max(1, text.length)),
          garbage: `${text}}{"x":1}`,
          literal: `{"name":"lit","handler":"noop","max_retries":NaN,"priority":Infinity}`,
          bom: `\uFEFF${text}`,
          toplevel: ['[]', '"str"', '123', 'true', 'null', '[{"name":"x","handler":"noop"}]'][n % 6]!,
          single: `{'name':'q','handler':'noop'}`,
          comment: `{"name":"c", /* x */ "handler":"noop"}`,
          dup: `{"name":"dup-${n}","handler":"noop","command":"echo 1","handler":"noop"}`,
        };
        cases.push({
          label: `create-broken-${how}`,
          method: 'POST',
          path: '/api/v1/jobs',
          body: variants[how],
          expect: how === 'bom' || how === 'dup' ? 'any' : 'reject',
        });
      }
      // Deep nesting and sizes.
      for (const depth of [100, 1000, 3000, 5000, 20_000, 100_000]) {
        for (const kind of ['array', 'object'] as const) {
          const payload = deepJson(depth, kind);
          if (payload.length > BODY_LIMIT - 100) continue;
          cases.push({
            label: `deep-${kind}-${depth}`,
            method: 'POST',
            path: '/api/v1/jobs',
            body: `{"name":"deep-${kind}-${depth}","handler":"noop","payload":${payload}}`,
            expect: 'any',
          });
          cases.push({
            label: `deep-trigger-${kind}-${depth}`,
            method: 'POST',
            path: `/api/v1/jobs/${seedNoop.id}/trigger`,
            body: `{"payload":${payload}}`,
            expect: 'any',
            trigger: true,
          });
          cases.push({
            label: `deep-body-${kind}-${depth}`,
            method: 'POST',
            path: '/api/v1/jobs',
            body: payload,
            expect: 'reject',
          });
        }
      }
      cases.push({
        label: 'oversize-body',
        method: 'POST',
        path: '/api/v1/jobs',
        body: json({ name: 'big', handler: 'noop', payload: 'x'.repeat(BODY_LIMIT + 10) }),
        expect: 'reject',
      });
      cases.push({
        label: 'oversize-trigger',
        method: 'POST',
        path: `/api/v1/jobs/${seedNoop.id}/trigger`,
        body: json({ payload: 'y'.repeat(BODY_LIMIT * 2) }),
        expect: 'reject',
      });
      cases.push({
        label: 'oversize-payload',
        method: 'POST',
        path: '/api/v1/jobs',
        body: json({ name: 'big-payload', handler: 'noop', payload: { s: 'z'.repeat(70_000) } }),
        expect: 'reject',
      });
      cases.push({
        label: 'oversize-name',
        method: 'POST',
        path: '/api/v1/jobs',
        body: json({ name: 'n'.repeat(201), handler: 'noop' }),
        expect: 'reject',
      });
      cases.push({
        label: 'oversize-command',
        method: 'POST',
        path: '/api/v1/jobs',
        body: json({ name: 'long-command', command: 'c'.repeat(10_001) }),
        expect: 'reject',
      });
      cases.push({
        label: 'oversize-many-keys',
        method: 'POST',
        path: '/api/v1/jobs',
        body: json(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]))),
        expect: 'reject',
      });
      // Content types.
      for (const [i, type] of [
        'text/plain',
        '',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=utf-16',
        'application/jsonx',
        'application/vnd.api+json',
        'APPLICATION/JSON',
        'application/json, text/plain',
        'application/json; charset=latin1',
        ' application/json',
      ].entries()) {
        const b = { name: `ctype-${i}`, handler: 'noop' };
        cases.push({
          label: `content-type ${JSON.stringify(type)}`,
          method: 'POST',
          path: '/api/v1/jobs',
          headers: { 'content-type': type },
          body: json(b),
          expect: 'any',
          create: b,
        });
      }

      // ---- triggers: seeded jobs (bodies, idempotency keys) and ids that cannot exist
      const idemKey = fc.option(
        fc.oneof(
          fc.string({ unit: 'binary-ascii', minLength: 0, maxLength: 250 }),
          fc.constantFrom('', ' ', 'a'.repeat(200), 'a'.repeat(201)),
        ),
        { freq: 2 },
      );
      for (const [body, key, which] of sample(fc.tuple(triggerBody, idemKey, fc.nat({ max: 1 })), 400, 4)) {
        const headers: Record<string, string> = key === null ? {} : { 'idempotency-key': key };
        cases.push({
          label: 'trigger',
          method: 'POST',
          path: `/api/v1/jobs/${seedJobs[which]}/trigger`,
          headers,
          body: json(body),
          expect: 'any',
          trigger: true,
        });
      }

      // ---- ids and queries on every route (ids never name a real row)
      const idRoutes: [string, (id: string) => string, Expect][] = [
        ['GET', (id) => `/api/v1/jobs/${id}`, 'reject'],
        ['GET', (id) => `/api/v1/jobs/${id}/executions`, 'reject'],
        ['GET', (id) => `/api/v1/executions/${id}`, 'reject'],
        ['DELETE', (id) => `/api/v1/jobs/${id}`, 'reject'],
        ['POST', (id) => `/api/v1/jobs/${id}/trigger`, 'reject'],
        ['POST', (id) => `/api/v1/jobs/${id}/pause`, 'reject'],
        ['POST', (id) => `/api/v1/jobs/${id}/resume`, 'reject'],
        ['POST', (id) => `/api/v1/executions/${id}/cancel`, 'reject'],
        ['POST', (id) => `/api/v1/executions/${id}/replay`, 'reject'],
      ];
      for (const [route, id, rawId] of sample(fc.tuple(fc.constantFrom(...idRoutes), idText, fc.boolean()), 500, 5)) {
        const [method, path, expect] = route;
        cases.push({
          label: 'ids',
          method,
          path: path(enc(id, rawId)),
          body: method === 'POST' ? '{}' : undefined,
          expect: changesRoute(id) ? 'any' : expect,
        });
      }
      const listQuery = fc.tuple(
        fc.constantFrom('/api/v1/jobs', '/api/v1/executions', `/api/v1/jobs/${seedNoop.id}/executions`),
        fc.dictionary(fc.constantFrom('limit', 'cursor', 'status', 'job_id', 'x', 'limit[]', '__proto__'), queryValue, {
          maxKeys: 4,
        }),
        fc.boolean(),
      );
      for (const [path, query, repeat] of sample(listQuery, 250, 6)) {
        const qs = new URLSearchParams();
        for (const [k, v] of Object.entries(query)) {
          qs.append(k, v);
          if (repeat) qs.append(k, v);
        }
        cases.push({ label: 'list-query', method: 'GET', path: `${path}?${qs}`, expect: 'any' });
      }
      for (const bad of ['%ED%A0%80', '%FF', '%E0%A4%A', '%', '%%', '%C0%AF', '%F4%90%80%80', '%uD800']) {
        cases.push({ label: 'bad-percent-id', method: 'GET', path: `/api/v1/jobs/${bad}`, expect: 'reject' });
        cases.push({
          label: 'bad-percent-query',
          method: 'GET',
          path: `/api/v1/executions?status=${bad}&job_id=${bad}`,
          expect: 'reject',
        });
        cases.push({
          label: 'bad-percent-preview',
          method: 'GET',
          path: `/api/v1/schedules/preview?cron_expr=*+*+*+*+*&timezone=${bad}`,
          expect: 'reject',
        });
        cases.push({
          label: 'bad-percent-name',
          method: 'GET',
          path: `/api/v1/jobs?status=active&x${bad}=1`,
          expect: 'any',
        });
      }
      cases.push({
        label: 'huge-query',
        method: 'GET',
        path: `/api/v1/jobs?limit=${'9'.repeat(30_000)}`,
        expect: 'reject',
      });

      // ---- schedule preview: cron grammar, time zones, instants, counts
      const preview = fc.record(
        { cron_expr: cronExpr, timezone, from: isoish, count: queryValue },
        { requiredKeys: [] },
      );
      for (const q of sample(preview, 450, 7)) {
        const qs = new URLSearchParams(Object.entries(q).map(([k, v]): [string, string] => [k, String(v)]));
        cases.push({ label: 'preview', method: 'GET', path: `/api/v1/schedules/preview?${qs}`, expect: 'any' });
      }
      // Schedules on real jobs too (handler jobs only; accepted ones are deleted at the end).
      for (const [cron, tz, name] of sample(fc.tuple(cronExpr, timezone, nameText), 200, 8)) {
        const b = {
          name: `cron ${name}`.slice(0, 150),
          cron_expr: cron,
          timezone: tz,
          handler: 'noop',
          status: 'paused',
        };
        cases.push({
          label: 'create-cron',
          method: 'POST',
          path: '/api/v1/jobs',
          body: json(b),
          expect: 'any',
          create: b,
        });
      }

      // ---- methods and headers
      const methods = fc.constantFrom('PUT', 'PATCH', 'DELETE', 'OPTIONS', 'POST', 'GET', 'HEAD', 'PROPFIND', 'get');
      const methodPaths = fc.constantFrom(
        '/api/v1/jobs',
        `/api/v1/jobs/${sacrificial.id}`,
        '/api/v1/executions',
        '/api/v1/stats',
        '/api/v1/workers',
        '/api/v1/openapi.json',
        '/healthz',
        '/',
        '/api',
        '/api/v2/jobs',
        '/api/v1',
        '/api/v1/nope',
        '/dashboard',
        '/../../etc/passwd',
      );
      for (const [method, path] of sample(fc.tuple(methods, methodPaths), 200, 9)) {
        if (method === 'POST' && path === '/api/v1/jobs') continue;
        cases.push({
          label: `method ${method}`,
          method,
          path,
          expect: 'any',
          body: ['POST', 'PUT', 'PATCH'].includes(method) ? '{}' : undefined,
        });
      }
      for (const rid of sample(fc.string({ unit: 'binary-ascii', maxLength: 300 }), 100, 10)) {
        cases.push({
          label: 'request-id',
          method: 'GET',
          path: '/api/v1/stats',
          headers: { 'x-request-id': rid },
          expect: 'any',
        });
      }

      // ---- send, 8 at a time
      ctx.log(`sending ${cases.length} HTTP requests`);
      const outcomes: Outcome[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < cases.length) {
            const c = cases[next++]!;
            outcomes.push(await send(base, c));
          }
        }),
      );

      writeFileSync(
        join(s.logDir, 'fuzz-outcomes.jsonl'),
        outcomes
          .map((o) =>
            JSON.stringify({
              label: o.c.label,
              method: o.c.method,
              path: o.c.path.slice(0, 300),
              headers: o.c.headers,
              body: o.c.body?.slice(0, 300),
              status: o.status,
              text: o.text.slice(0, 300),
            }),
          )
          .join('\n'),
      );

      // ---- raw socket: protocol-level garbage and smuggling
      const rawCases: { label: string; bytes: Buffer | string; unauth?: boolean }[] = [
        ...sample(fc.uint8Array({ minLength: 1, maxLength: 300 }), 60, 11).map((b) => ({
          label: 'raw-bytes',
          bytes: Buffer.concat([Buffer.from(b), Buffer.from('\r\n\r\n')]),
        })),
        { label: 'raw-no-auth', bytes: 'GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\n\r\n', unauth: true },
        { label: 'raw-dot-segments', bytes: 'GET /api/v1/../v1/jobs HTTP/1.1\r\nHost: x\r\n\r\n', unauth: true },
        { label: 'raw-dot-segments-2', bytes: 'GET /healthz/../api/v1/jobs HTTP/1.1\r\nHost: x\r\n\r\n', unauth: true },
        {
          label: 'raw-absolute-form',
          bytes: 'GET http://evil.example/api/v1/jobs HTTP/1.1\r\nHost: x\r\n\r\n',
          unauth: true,
        },
        { label: 'raw-http10', bytes: 'GET /api/v1/jobs HTTP/1.0\r\n\r\n', unauth: true },
        { label: 'raw-http09', bytes: 'GET /api/v1/jobs\r\n\r\n', unauth: true },
        { label: 'raw-bad-version', bytes: 'GET /api/v1/jobs HTTP/9.9\r\nHost: x\r\n\r\n', unauth: true },
        { label: 'raw-bad-method', bytes: 'FOO /api/v1/jobs HTTP/1.1\r\nHost: x\r\n\r\n', unauth: true },
        {
          label: 'raw-dup-auth',
          bytes: `GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nAuthorization: Bearer wrong2\r\n\r\n`,
          unauth: true,
        },
        {
          label: 'raw-auth-folded',
          bytes: `GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer\r\n ${KEYS[0]}x\r\n\r\n`,
          unauth: true,
        },
        {
          label: 'raw-auth-nul',
          bytes: `GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEYS[0]}\u0000x\r\n\r\n`,
          unauth: true,
        },
        {
          label: 'raw-header-overflow',
          bytes: `GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        },
        {
          label: 'raw-many-headers',
          bytes: `GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: v`).join('\r\n')}\r\n\r\n`,
        },
        {
          label: 'raw-cl-te',
          bytes: `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /api/v1/jobs HTTP/1.1\r\nHost: x\r\n\r\n`,
        },
        {
          label: 'raw-te-te',
          bytes: `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n`,
        },
        {
          label: 'raw-bad-chunk',
          bytes: `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEYS[0]}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
        },
        { label: 'raw-negative-cl', bytes: `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n` },
        {
          label: 'raw-two-cl',
          bytes: `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
        },
        {
          label: 'raw-pipelined-smuggle',
          bytes: `GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/jobs HTTP/1.1\r\nHost: x\r\n\r\n`,
        },
        {
          label: 'raw-crlf-in-path',
          bytes: `GET /api/v1/jobs\r\nAuthorization: Bearer ${KEYS[0]} HTTP/1.1\r\nHost: x\r\n\r\n`,
        },
        { label: 'raw-lf-only', bytes: 'GET /api/v1/jobs HTTP/1.1\nHost: x\n\n', unauth: true },
        {
          label: 'raw-space-before-colon',
          bytes: `GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization : Bearer ${KEYS[0]}\r\n\r\n`,
        },
      ];
      const rawProblems: string[] = [];
      for (const r of rawCases) {
        const res = await raw(port, r.bytes);
        const bad = res.statuses.filter((st) => st >= 500);
        // The pipelined case answers /healthz (200) first; the second request must not get through without a key.
        const okAfterFirst =
          r.label === 'raw-pipelined-smuggle'
            ? res.statuses.slice(1).filter((st) => st < 400)
            : res.statuses.filter((st) => st < 400);
        if (bad.length > 0) rawProblems.push(`${r.label}: ${res.statuses.join(',')}`);
        if (okAfterFirst.length > 0)
          rawProblems.push(
            `${r.label}: answered ${res.statuses.join(',')} (accepted without a valid key or malformed)`,
          );
        // Only CR/LF: empty lines before a request line, which a server must ignore while it waits (RFC 9112 2.2).
        const emptyLines = /^[\r\n]*$/.test(Buffer.from(r.bytes).toString('latin1'));
        if (res.statuses.length === 0 && !res.closed && !emptyLines)
          rawProblems.push(
            `${r.label}: no answer and the connection stayed open (sent ${JSON.stringify(Buffer.from(r.bytes).toString('latin1').slice(0, 120))})`,
          );
      }

      // ---- judge the HTTP outcomes
      const problems: string[] = [];
      const by = (pred: (o: Outcome) => boolean) => outcomes.filter(pred);
      const fivexx = by((o) => typeof o.status === 'number' && o.status >= 500);
      const timeouts = by((o) => o.status === 'timeout');
      const errors = by((o) => o.status === 'error');
      const acceptedInvalid = by((o) => o.c.expect === 'reject' && typeof o.status === 'number' && o.status < 400);
      const bypass = by((o) => o.c.expect === 'unauth' && typeof o.status === 'number' && o.status < 400);
      const describe = (o: Outcome) =>
        `${o.c.label}: ${o.c.method} ${o.c.path.slice(0, 80)} ${o.c.body ? o.c.body.slice(0, 80) : ''} → ${o.status} ${o.text.slice(0, 120)}`;
      const report = (what: string, list: Outcome[]) => {
        if (list.length === 0) return;
        const labels = [...new Set(list.map((o) => o.c.label))].slice(0, 6).join(', ');
        problems.push(`${list.length} ${what} [${labels}]; e.g. ${describe(list[0]!)}`);
      };
      report('requests answered 5xx', fivexx);
      report('requests not answered within 10 s', timeouts);
      report('requests failed at the connection', errors);
      report('invalid requests accepted', acceptedInvalid);
      report('requests without a valid key got through (auth bypass)', bypass);
      problems.push(...rawProblems);

      // Accepted creates read back exactly as sent.
      const created: { id: string; body: Record<string, unknown> }[] = [];
      for (const o of outcomes)
        if (o.c.create && o.status === 201) created.push({ id: String(o.body.id), body: o.c.create });
      const mismatches: string[] = [];
      for (const { id, body } of created) {
        const got = await client.request('GET', `/api/v1/jobs/${id}`);
        mismatches.push(...compareJob(id, body, got.body));
      }
      // Every job created here (fuzz or round trip) is deleted at the end: none of them may keep firing.
      const createdIds = new Set(created.map((c) => c.id));
      for (const o of outcomes)
        if (o.c.label.startsWith('deep-') && o.status === 201 && o.body?.id && !o.c.trigger)
          createdIds.add(String(o.body.id));

      // ---- round trip of curated hostile strings: job names, commands, payloads, trigger payloads
      const roundTrip = await roundTrips(client, seedNoop.id, nameTextSample(seed));
      mismatches.push(...roundTrip.mismatches);
      roundTrip.jobIds.forEach((id) => createdIds.add(id));
      if (mismatches.length > 0)
        problems.push(
          `${mismatches.length} stored values did not read back as sent; e.g. ${mismatches.slice(0, 3).join(' | ')}`,
        );

      for (const id of createdIds) await client.request('DELETE', `/api/v1/jobs/${id}`);

      const acks: Ack[] = [...roundTrip.acks];
      for (const o of outcomes)
        if (o.c.trigger && typeof o.status === 'number' && o.status >= 200 && o.status < 300 && o.body?.root_id)
          acks.push({ root: String(o.body.root_id), jobId: '', at: 0 });
      const books = await checkBooks(
        s,
        acks.map((a) => a.root),
      );
      // Trigger payloads still read back exactly after their executions ran.
      const after = await roundTripExecutions(client, roundTrip.executions);
      if (after.length > 0) problems.push(`${after.length} execution payloads changed after running; e.g. ${after[0]}`);

      await sleep(200);
      const health = await client.request('GET', '/healthz');
      if (health.status !== 200) problems.push(`healthz at the end: ${health.status} ${health.text}`);
      if (!api.alive) problems.push(`the API process died: ${JSON.stringify(api.exitInfo)}`);
      const unhandled = api.events('http.unhandled_error');
      const causes = [
        ...new Set(
          unhandled.map(
            (e) => `${(e.err as any)?.name}: ${String((e.err as any)?.message).slice(0, 80)} (${e.method} ${e.path})`,
          ),
        ),
      ];
      // The server's own view: a request it logged as a 500 (even one the client never saw) is a bug report.
      if (unhandled.length > 0)
        problems.push(
          `the API logged ${unhandled.length} unhandled errors (status 500): ${causes.slice(0, 4).join(' | ')}`,
        );
      const statusCounts: Record<string, number> = {};
      for (const o of outcomes) statusCounts[String(o.status)] = (statusCounts[String(o.status)] ?? 0) + 1;
      return verdict(books, {
        problems,
        recovery: '-',
        notes: [
          `${outcomes.length} HTTP requests + ${rawCases.length} raw-socket requests; statuses ${JSON.stringify(statusCounts)}`,
          `${created.length} fuzz-created jobs read back; ${roundTrip.checked} curated round trips`,
        ],
      });
    } finally {
      await s.close();
    }
  },
};

function nameTextSample(seed: number): string[] {
  return fc.sample(nameText, { numRuns: 60, seed: seed + 99 });
}

function compareJob(id: string, sent: Record<string, unknown>, got: any): string[] {
  const out: string[] = [];
  if (!got || typeof got !== 'object') return [`job ${id}: no body`];
  const show = (v: unknown) => JSON.stringify(v)?.slice(0, 60);
  // Names are stored trimmed and NFC-normalised (README: one spelling per name), everything else byte for byte.
  if (typeof sent.name === 'string' && got.name !== sent.name.trim().normalize('NFC'))
    out.push(`job ${id} name ${show(sent.name)} → ${show(got.name)}`);
  if (typeof sent.command === 'string' && got.command !== sent.command)
    out.push(`job ${id} command ${show(sent.command)} → ${show(got.command)}`);
  if (typeof sent.cron_expr === 'string' && got.cron_expr !== sent.cron_expr)
    out.push(`job ${id} cron_expr ${show(sent.cron_expr)} → ${show(got.cron_expr)}`);
  if (typeof sent.timezone === 'string' && got.timezone !== sent.timezone)
    out.push(`job ${id} timezone ${show(sent.timezone)} → ${show(got.timezone)}`);
  if ('payload' in sent && sent.payload !== undefined && !sameJson(sent.payload, got.payload))
    out.push(`job ${id} payload ${show(sent.payload)} → ${show(got.payload)}`);
  return out;
}

async function roundTrips(client: ApiClient, noopJob: string, generated: string[]) {
  const mismatches: string[] = [];
  const jobIds: string[] = [];
  const acks: Ack[] = [];
  const executions: { id: string; payload: unknown }[] = [];
  let checked = 0;
  const strings = [...HOSTILE_STRINGS, ...HOSTILE_WITH_CONTROLS, ...generated];
  for (const [i, h] of strings.entries()) {
    // Names refuse control and invisible formatting characters (bidi controls, zero-width, line separators).
    const hasControl = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(h);
    const name = `rt-${i} ${h}`;
    const payload = { s: h, list: [h, { [h]: h }], [h]: [h] };
    const body = { name, command: h, payload };
    const res = await client.request('POST', '/api/v1/jobs', { body });
    checked++;
    if (hasControl) {
      if (res.status !== 400)
        mismatches.push(`name with control characters ${JSON.stringify(h)} answered ${res.status}, expected 400`);
      const ok = await client.request('POST', '/api/v1/jobs', {
        body: { name: `rt-${i} control`, command: h, payload },
      });
      if (ok.status !== 201)
        mismatches.push(
          `command/payload with control characters ${JSON.stringify(h)} answered ${ok.status}: ${ok.text.slice(0, 100)}`,
        );
      else {
        jobIds.push(String(ok.body.id));
        mismatches.push(
          ...compareJob(
            ok.body.id,
            { command: h, payload },
            (await client.request('GET', `/api/v1/jobs/${ok.body.id}`)).body,
          ),
        );
      }
    } else if (res.status !== 201) {
      mismatches.push(
        `hostile string ${JSON.stringify(h).slice(0, 60)} refused: ${res.status} ${res.text.slice(0, 100)}`,
      );
    } else {
      jobIds.push(String(res.body.id));
      mismatches.push(
        ...compareJob(res.body.id, body, (await client.request('GET', `/api/v1/jobs/${res.body.id}`)).body),
      );
      const listed = await client.request('GET', `/api/v1/jobs?limit=5`);
      const inList = (listed.body?.data ?? []).find((j: any) => j.id === res.body.id);
      if (inList && inList.name !== name.trim().normalize('NFC'))
        mismatches.push(`job ${res.body.id} name in the list ${JSON.stringify(inList.name).slice(0, 60)}`);
    }
    const trig = await client.request('POST', `/api/v1/jobs/${noopJob}/trigger`, { body: { payload } });
    if (trig.status !== 201)
      mismatches.push(`trigger with payload ${JSON.stringify(h).slice(0, 40)} answered ${trig.status}`);
    else {
      acks.push({ root: String(trig.body.root_id), jobId: noopJob, at: Date.now() });
      executions.push({ id: String(trig.body.id), payload });
      const got = await client.request('GET', `/api/v1/executions/${trig.body.id}`);
      if (!sameJson(payload, got.body?.payload))
        mismatches.push(
          `execution ${trig.body.id} payload ${JSON.stringify(h).slice(0, 40)} → ${JSON.stringify(got.body?.payload).slice(0, 60)}`,
        );
    }
  }
  // Unpaired surrogates cannot be stored as text: refusing them is right, storing something else is not.
  for (const [i, h] of LONE_SURROGATES.entries()) {
    for (const body of [
      { name: `lone-${i} ${h}`, handler: 'noop' },
      { name: `lone-c-${i}`, command: h },
      { name: `lone-p-${i}`, handler: 'noop', payload: { s: h, [h]: 1 } },
    ]) {
      checked++;
      const res = await client.request('POST', '/api/v1/jobs', { body });
      if (res.status === 201) {
        jobIds.push(String(res.body.id));
        mismatches.push(
          ...compareJob(res.body.id, body, (await client.request('GET', `/api/v1/jobs/${res.body.id}`)).body),
        );
      } else if (res.status !== 400)
        mismatches.push(`lone surrogate ${JSON.stringify(body).slice(0, 60)} answered ${res.status}`);
    }
    const trig = await client.request('POST', `/api/v1/jobs/${noopJob}/trigger`, { body: { payload: { s: h } } });
    checked++;
    if (trig.status === 201) {
      acks.push({ root: String(trig.body.root_id), jobId: noopJob, at: Date.now() });
      executions.push({ id: String(trig.body.id), payload: { s: h } });
      const got = await client.request('GET', `/api/v1/executions/${trig.body.id}`);
      if (!sameJson({ s: h }, got.body?.payload))
        mismatches.push(
          `execution ${trig.body.id} payload with a lone surrogate ${JSON.stringify(h)} stored as ${JSON.stringify(got.body?.payload)}`,
        );
    } else if (trig.status !== 400) mismatches.push(`trigger with a lone surrogate answered ${trig.status}`);
  }
  return { mismatches, jobIds, acks, executions, checked };
}

async function roundTripExecutions(
  client: ApiClient,
  executions: { id: string; payload: unknown }[],
): Promise<string[]> {
  const out: string[] = [];
  for (const e of executions) {
    const got = await client.request('GET', `/api/v1/executions/${e.id}`);
    if (got.body?.status !== 'succeeded') out.push(`execution ${e.id} ended ${got.body?.status}`);
    else if (!sameJson(e.payload, got.body?.payload))
      out.push(`execution ${e.id}: ${JSON.stringify(got.body?.payload).slice(0, 60)}`);
  }
  return out;
}
