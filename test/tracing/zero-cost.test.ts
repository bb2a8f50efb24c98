/**
 * Tracing costs nothing when OTEL_EXPORTER_OTLP_ENDPOINT is unset: the OpenTelemetry packages are imported only by
 * functions/tracing.ts, only dynamically (inside createTracing), and createTracing is called only when configured.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { loadConfig } from '../../functions/config';
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
  const importers = [...sources(join(ROOT, 'functions')), ...sources(join(ROOT, 'packages'))].filter((f) => readFileSync(f, 'utf8').includes('@opentelemetry/'));
  expect(importers.map((f) => f.slice(ROOT.length))).toEqual(['functions/tracing.ts']);
  const text = readFileSync(join(ROOT, 'functions/tracing.ts'), 'utf8');
  expect(text).not.toMatch(/^import [^;]*'@opentelemetry\//m);
  expect(text).toMatch(/import\('@opentelemetry\/sdk-trace-node'\)/);
  const context = readFileSync(join(ROOT, 'functions/context.ts'), 'utf8');
  expect(context).toMatch(/config\.otelTracesUrl \? await createTracing\(/);
});

it('reads the OTLP endpoint the OpenTelemetry way, and refuses a bad one', () => {
  expect(loadConfig({}).otelTracesUrl).toBeNull();
  expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).otelTracesUrl).toBe('http://collector:4318/v1/traces');
  expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/traces' }).otelTracesUrl).toBe('https://b/traces');
  expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http/);
});
