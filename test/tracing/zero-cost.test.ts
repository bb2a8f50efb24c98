/**
 * Tracing costs nothing when OTEL_EXPORTER_OTLP_ENDPOINT is unset: the OpenTelemetry packages are imported only by
 * functions/tracing.ts, only dynamically (inside createTracing), and createTracing is called only when configured;
 * and a worker's store then reads claimed attempts without their stored trace parent.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createStore } from '@jobs/store';
import { expect, it } from 'vitest';
import { loadConfig } from '../../functions/config';
import { createTestEnv } from '../support/env';
import { ROOT } from '../support/processes';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules') return [];
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|tsx)$/.test(name) && !name.endsWith('.test.ts') ? [path] : [];
  });
}

it('imports the OpenTelemetry SDK nowhere but in createTracing, dynamically', () => {
  const importers = [...sources(join(ROOT, 'functions')), ...sources(join(ROOT, 'packages'))].filter((f) =>
    readFileSync(f, 'utf8').includes('@opentelemetry/'),
  );
  expect(importers.map((f) => f.slice(ROOT.length))).toEqual(['functions/tracing.ts']);
  const text = readFileSync(join(ROOT, 'functions/tracing.ts'), 'utf8');
  expect(text).not.toMatch(/^import [^;]*'@opentelemetry\//m);
  expect(text).toMatch(/import\('@opentelemetry\/sdk-trace-node'\)/);
  const context = readFileSync(join(ROOT, 'functions/context.ts'), 'utf8');
  expect(context).toMatch(/config\.otelTracesUrl\s*\?\s*await createTracing\(/);
  expect(context).toMatch(/createStore\(pool, \{ traceparent: tracing !== null[,}\s]/);
});

it('reads the OTLP endpoint the OpenTelemetry way, and refuses a bad one', () => {
  expect(loadConfig({}).otelTracesUrl).toBeNull();
  expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).otelTracesUrl).toBe(
    'http://collector:4318/v1/traces',
  );
  expect(
    loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/traces' })
      .otelTracesUrl,
  ).toBe('https://b/traces');
  expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
    /OTEL_EXPORTER_OTLP_ENDPOINT must be an http/,
  );
});

it('reads the stored trace parent with claimed attempts only where tracing is on', async () => {
  const env = await createTestEnv('zero_cost');
  try {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const claims = async (overlap: string) => {
      const { rows } = await env.pool.query(
        `WITH j AS (INSERT INTO jobs (name, handler, overlap) VALUES (gen_random_uuid()::text, 'noop', $1) RETURNING id)
         INSERT INTO executions (job_id, trigger, status, lane, scheduled_for, traceparent)
         SELECT id, 'manual', 'queued', 'short', now(), $2 FROM j RETURNING id::text`,
        [overlap, traceparent],
      );
      return [{ id: rows[0].id as string, token: `t-${rows[0].id}` }];
    };
    const off = createStore(env.pool, { traceparent: false });
    const claim = await claims('allow');
    expect((await env.store.executionsLoad(claim)).loaded[0]!.traceparent).toBe(traceparent);
    expect((await off.executionsLoad(claim)).loaded[0]!.traceparent).toBeNull();
    // Overlap-restricted jobs are started by their own statement.
    const start = (store: typeof off, c: typeof claim) =>
      store.executionsStart({ workerId: 'w', leaseMs: 60_000, claims: c });
    expect((await start(env.store, await claims('forbid'))).started[0]!.traceparent).toBe(traceparent);
    expect((await start(off, await claims('forbid'))).started[0]!.traceparent).toBeNull();
  } finally {
    await env.cleanup();
  }
});
