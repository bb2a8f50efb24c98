/** An API app on a fresh TestEnv (own schema and Redis prefix), and a small JSON client over app.request(). */
import { createApp, type ApiDeps } from '@jobs/api';
import { systemClock } from '@jobs/core';
import { liveOutputReader, queueKeys } from '@jobs/queue';
import { postgresLiveOutputReader } from '@jobs/queue-postgres';
import { dashboardRoutes } from '@jobs/dashboard';
import type { Store } from '@jobs/store';
import { createTestEnv, recorder, type TestEnv } from '../support/env';

export interface CallOptions {
  body?: unknown;
  /** Sent as is (no JSON encoding, no Content-Type unless given). */
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
}

export interface CallResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export type Harness = Awaited<ReturnType<typeof apiHarness>>;

/** The deps keep the whole store's type, so tests can run the core's passes (runTick) on them too. */
export async function apiHarness(overrides: Partial<Omit<ApiDeps, 'store'>> & { store?: Store } = {}) {
  const env: TestEnv = await createTestEnv('api');
  const rec = recorder();
  const deps = {
    store: env.store,
    queue: env.queue,
    queueBackend: env.backend,
    clock: systemClock,
    sink: rec.sink,
    logger: rec.logger,
    apiKeys: [],
    bodyLimitBytes: 256 * 1024,
    shortLaneMaxTimeoutMs: 600_000,
    workerActiveWithinMs: 60_000,
    liveOutput:
      env.backend === 'redis' ? liveOutputReader(env.redis, queueKeys(env.prefix)) : postgresLiveOutputReader(env.pool),
    ...overrides,
  } satisfies ApiDeps;
  const app = createApp(deps, [dashboardRoutes]);

  async function call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<CallResult<T>> {
    const headers: Record<string, string> = { ...options.headers };
    let body: string | Uint8Array | undefined = options.raw;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['Content-Type'] ??= 'application/json';
    }
    const res = await app.request(path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  /** Creates a job through the API and returns its JSON; fails the test on anything but 201. */
  async function createJob(fields: Record<string, unknown> = {}) {
    const res = await call('POST', '/api/v1/jobs', {
      body: { name: `job-${Math.random().toString(36).slice(2)}`, command: 'echo hi', ...fields },
    });
    if (res.status !== 201) throw new Error(`create job: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  return { env, rec, deps, app, call, createJob, cleanup: () => env.cleanup() };
}
