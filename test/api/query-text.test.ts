/**
 * Query parameters that are not text the database can hold (NUL, unpaired surrogates, bytes that are not UTF-8) are
 * a 400 naming the parameter on every route, API and dashboard, never a 500 from PostgreSQL. The routes and their
 * parameters come from the OpenAPI document and the dashboard's route table (with the names its pages read), so a
 * new route or parameter is covered without touching this file.
 */
import { DASHBOARD_ROUTES } from '@jobs/dashboard';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, type Harness } from './harness';

/** Percent-encoded values that are not text: NUL, UTF-8-spelled surrogates, stray, cut and overlong bytes. */
const BAD = ['%00', 'a%00b', '%ED%A0%80', 'x%ED%B0%80', '%ED%A0%BD%ED%B8%80', '%FF', '%C3', '%C0%AF', '%F4%90%80%80'];

let h: Harness;
let jobId: string;
beforeAll(async () => {
  h = await apiHarness();
  jobId = (await h.createJob({ name: 'query-text' })).id;
});
afterAll(async () => {
  await h.cleanup();
});

/** Sends `method path?name=value` and expects the 400 that names the parameter. */
async function expectRefused(method: string, path: string, name: string, value: string) {
  const sep = path.includes('?') ? '&' : '?';
  const url = `${path}${sep}${encodeURIComponent(name)}=${value}`;
  const res = await h.app.request(url, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: method === 'GET' || method === 'HEAD' ? undefined : '{}',
  });
  const text = await res.text();
  expect(res.status, `${method} ${url}: ${text.slice(0, 200)}`).toBe(400);
  expect(res.headers.get('content-type'), url).toMatch(/^application\/json/);
  const body = JSON.parse(text);
  expect(body.error.code, url).toBe('validation_failed');
  expect(body.error.details, url).toEqual([{ path: `query.${name}`, message: expect.any(String) }]);
  expect(body.error.message, url).toContain(`query.${name}`);
}

describe('query parameters that are not text', () => {
  it('are a 400 naming the parameter on every operation of the OpenAPI document', async () => {
    const doc = (await h.call('GET', '/api/v1/openapi.json')).body;
    let checked = 0;
    for (const [template, operations] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(operations)) {
        const params: any[] = op.parameters ?? [];
        const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
          const schema = params.find((p) => p.in === 'path' && p.name === name)?.schema;
          return schema?.enum?.[0] ?? (name === 'id' ? jobId : 'x');
        });
        for (const param of params.filter((p) => p.in === 'query')) {
          for (const value of BAD) {
            await expectRefused(method.toUpperCase(), path, param.name, value);
            checked++;
          }
        }
      }
    }
    // Every list, the audit trail, the preview, the output: a document with no query parameters would test nothing.
    expect(checked).toBeGreaterThanOrEqual(10 * BAD.length);
  });

  it('are a 400 naming the parameter on every dashboard route, for each name the pages read', async () => {
    // The names any dashboard page reads from its query, found in its source so a new one is covered too.
    const dir = join(__dirname, '../../packages/dashboard/src');
    const names = new Set(['x']);
    for (const file of readdirSync(dir, { recursive: true }) as string[]) {
      if (!/\.tsx?$/.test(file)) continue;
      const source = readFileSync(join(dir, file), 'utf8');
      for (const m of source.matchAll(/query\('([a-z_]+)'\)|\bq\.([a-z_]+)\b/g)) names.add(m[1] ?? m[2]!);
    }
    expect([...names]).toEqual(expect.arrayContaining(['key', 'target', 'action', 'before', 'status', 'next']));
    for (const route of DASHBOARD_ROUTES) {
      const path = route.path.replace(/:id\{[^}]*\}/g, jobId);
      for (const name of names) for (const value of BAD) await expectRefused(route.method, path, name, value);
    }
  });

  it('names a bad parameter name, and lets every real character through, U+FFFD included', async () => {
    for (const name of ['%00', 'a%00', '%ED%A0%80', '%FF']) {
      const res = await h.call('GET', `/api/v1/audit?${name}=1`);
      expect(res.status, name).toBe(400);
      expect(res.body.error.details[0].path).toBe('query');
    }
    for (const value of [
      '%C3%A9t%C3%A9',
      '%F0%9F%98%80',
      '%EF%BF%BD',
      'a+b',
      '100%',
      '%zz',
      encodeURIComponent('\u{10FFFF}'),
    ]) {
      expect((await h.call('GET', `/api/v1/audit?key=${value}&target=${value}`)).status, value).toBe(200);
      expect((await h.app.request(`/audit?key=${value}&target=${value}`)).status, value).toBe(200);
    }
  });

  it('refuses what the red team sent: NUL in the audit filters, API and dashboard', async () => {
    for (const path of ['/api/v1/audit?key=%00', '/api/v1/audit?target=%00', '/audit?key=%00', '/audit?target=%00']) {
      const res = await h.app.request(path);
      expect(res.status, path).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'validation_failed' } });
    }
  });
});
