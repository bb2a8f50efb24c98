import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, type Harness } from './harness';

let h: Harness;
let doc: any;
beforeAll(async () => {
  h = await apiHarness();
  const res = await h.call('GET', '/api/v1/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
});
afterAll(async () => {
  await h.cleanup();
});

const ENDPOINTS: [string, string][] = [
  ['post', '/api/v1/jobs'],
  ['get', '/api/v1/jobs'],
  ['get', '/api/v1/jobs/{id}'],
  ['delete', '/api/v1/jobs/{id}'],
  ['post', '/api/v1/jobs/{id}/trigger'],
  ['post', '/api/v1/jobs/{id}/pause'],
  ['post', '/api/v1/jobs/{id}/resume'],
  ['get', '/api/v1/jobs/{id}/executions'],
  ['get', '/api/v1/jobs/{id}/limits'],
  ['patch', '/api/v1/jobs/{id}'],
  ['put', '/api/v1/jobs/by-name/{name}'],
  ['post', '/api/v1/jobs/by-name/{name}/plan'],
  ['get', '/api/v1/jobs/{id}/versions'],
  ['post', '/api/v1/jobs/{id}/backfill'],
  ['get', '/api/v1/lanes'],
  ['post', '/api/v1/lanes/{lane}/pause'],
  ['post', '/api/v1/lanes/{lane}/resume'],
  ['get', '/api/v1/executions'],
  ['get', '/api/v1/executions/{id}'],
  ['get', '/api/v1/executions/{id}/output'],
  ['post', '/api/v1/executions/{id}/cancel'],
  ['post', '/api/v1/executions/{id}/replay'],
  ['get', '/api/v1/workers'],
  ['get', '/api/v1/stats'],
  ['get', '/api/v1/schedules/preview'],
  ['get', '/api/v1/audit'],
  ['post', '/api/v1/channels'],
  ['get', '/api/v1/channels'],
  ['get', '/api/v1/channels/{name}'],
  ['patch', '/api/v1/channels/{name}'],
  ['delete', '/api/v1/channels/{name}'],
  ['post', '/api/v1/channels/{name}/test'],
  ['get', '/healthz'],
];

describe('GET /api/v1/openapi.json', () => {
  it('is an OpenAPI 3.1 document with every endpoint', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    const documented = Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) =>
      Object.keys(ops).map((m) => `${m} ${path}`),
    );
    expect(documented.sort()).toEqual(ENDPOINTS.map(([m, p]) => `${m} ${p}`).sort());
  });

  it('documents request bodies, parameters and responses from the zod schemas', () => {
    const create = doc.paths['/api/v1/jobs'].post;
    expect(create.requestBody.required).toBe(true);
    const createSchema = resolve(create.requestBody.content['application/json'].schema);
    expect(createSchema.required).toEqual(['name']);
    expect(createSchema.additionalProperties).toBe(false);
    expect(Object.keys(createSchema.properties)).toEqual(
      expect.arrayContaining([
        'name',
        'cron_expr',
        'timezone',
        'run_at',
        'command',
        'handler',
        'payload',
        'backoff',
        'lane',
        'misfire',
      ]),
    );
    expect(resolve(create.responses['201'].content['application/json'].schema).properties).toHaveProperty(
      'next_run_at',
    );
    for (const code of ['400', '401', '409', '413', '415']) expect(create.responses, code).toHaveProperty(code);

    const trigger = doc.paths['/api/v1/jobs/{id}/trigger'].post;
    expect(trigger.requestBody.required).toBe(false);
    const params = trigger.parameters.map((p: any) => `${p.in}:${p.name}`);
    expect(params).toEqual(expect.arrayContaining(['path:id', 'header:Idempotency-Key']));
    expect(Object.keys(trigger.responses)).toEqual(expect.arrayContaining(['200', '201', '404']));

    const list = doc.paths['/api/v1/executions'].get.parameters.map((p: any) => p.name);
    expect(list).toEqual(expect.arrayContaining(['status', 'job_id', 'limit', 'cursor']));
    const preview = doc.paths['/api/v1/schedules/preview'].get.parameters.map((p: any) => p.name);
    expect(preview).toEqual(expect.arrayContaining(['cron_expr', 'timezone', 'from', 'count']));
  });

  it('is internally consistent: every $ref resolves, every path parameter is declared, every operation answers', () => {
    const refs: string[] = [];
    (function walk(node: any) {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        if (typeof node.$ref === 'string') refs.push(node.$ref);
        Object.values(node).forEach(walk);
      }
    })(doc);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(() => resolve({ $ref: ref }), ref).not.toThrow();

    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      for (const [method, op] of Object.entries<any>(ops)) {
        const declared = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
        expect(declared.sort(), `${method} ${path}`).toEqual(names.sort());
        expect(Object.keys(op.responses).length, `${method} ${path}`).toBeGreaterThan(0);
      }
    }
  });

  it('declares bearer auth for the API and none for /healthz', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths['/healthz'].get.security).toEqual([]);
  });
});

function resolve(schema: any): any {
  if (!schema?.$ref) return schema;
  const parts = schema.$ref.replace(/^#\//, '').split('/');
  let node = doc;
  for (const part of parts) {
    node = node?.[part];
    if (node === undefined) throw new Error(`unresolved ${schema.$ref}`);
  }
  return node;
}
