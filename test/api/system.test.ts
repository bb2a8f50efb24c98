import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '@jobs/api';
import { nextFireTimes, parseCron } from '@jobs/core';
import { createQueue } from '@jobs/queue';
import { createStore } from '@jobs/store';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createServer, type Server, type Socket } from 'node:net';
import { engine } from '../support/engine';
import { eventually, manualClock } from '../support/env';
import { apiHarness, type Harness } from './harness';

let h: Harness;
let e: ReturnType<typeof engine>;
beforeEach(async () => {
  h = await apiHarness();
  e = engine(h.env);
});
afterEach(async () => {
  await e.stopAll();
  await h.cleanup();
});

describe('GET /api/v1/workers', () => {
  it('lists workers that heartbeated recently, with their details', async () => {
    expect((await h.call('GET', '/api/v1/workers')).body).toEqual({ data: [] });
    const worker = await e.worker({ heartbeatMs: 60_000, concurrency: 3 });
    const res = await h.call('GET', '/api/v1/workers');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      {
        id: worker.id,
        kind: 'local',
        host: 'test',
        lanes: ['short', 'long'],
        started_at: expect.any(String),
        last_heartbeat_at: expect.any(String),
        concurrency: 3,
        in_flight: 0,
        version: 'test',
      },
    ]);
    // Outside the activity window it is no longer listed.
    const strict = createApp({ ...h.deps, workerActiveWithinMs: 1 });
    await new Promise((r) => setTimeout(r, 30));
    expect(await (await strict.request('/api/v1/workers')).json()).toEqual({ data: [] });
  });
});

describe('GET /api/v1/stats', () => {
  it('reports counts, queue depth per lane, throughput, success rate, durations and the oldest queued age', async () => {
    const empty = await h.call('GET', '/api/v1/stats');
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({
      counts: { queued: 0, running: 0, succeeded: 0, dead: 0 },
      queue: {
        short: { ready: 0, delayed: 0, running: 0, dead: 0 },
        long: { ready: 0, delayed: 0, running: 0, dead: 0 },
      },
      throughput: { last_minute: 0, last_hour: 0 },
      success_rate: { last_hour: null },
      duration_ms: { p50: null, p95: null, sample: 0 },
      oldest_queued_age_ms: null,
    });

    await e.worker();
    const ok = await h.createJob({ command: 'true' });
    const bad = await h.createJob({ command: 'exit 1', max_retries: 0 });
    const okRun = (await h.call('POST', `/api/v1/jobs/${ok.id}/trigger`)).body;
    const badRun = (await h.call('POST', `/api/v1/jobs/${bad.id}/trigger`)).body;
    await eventually(async () => {
      const [a, b] = await Promise.all([h.env.store.executionGet(okRun.id), h.env.store.executionGet(badRun.id)]);
      return a?.status === 'succeeded' && b?.status === 'dead';
    });
    await e.stopAll();
    const waiting = await h.createJob({ command: 'true', lane: 'long' });
    await h.call('POST', `/api/v1/jobs/${waiting.id}/trigger`);

    const res = await h.call('GET', '/api/v1/stats');
    expect(res.body).toMatchObject({
      counts: { queued: 1, succeeded: 1, dead: 1 },
      lanes: { long: { queued: 1, retrying: 0, running: 0 }, short: { queued: 0 } },
      queue: { long: { ready: 1 }, short: { ready: 0, dead: 1 } },
      throughput: { last_minute: 2, last_hour: 2 },
      success_rate: { last_hour: 0.5 },
      duration_ms: { sample: 2 },
    });
    expect(res.body.duration_ms.p50).toBeGreaterThanOrEqual(0);
    expect(res.body.duration_ms.p95).toBeGreaterThanOrEqual(res.body.duration_ms.p50);
    expect(res.body.oldest_queued_age_ms).toBeGreaterThanOrEqual(0);
    expect(Date.parse(res.body.generated_at)).not.toBeNaN();
  });
});

describe('GET /api/v1/schedules/preview', () => {
  const preview = (query: string) => h.call('GET', `/api/v1/schedules/preview?${query}`);

  it('answers what the scheduler computes, across a DST change', async () => {
    const res = await preview(
      `cron_expr=${encodeURIComponent('30 2 * * *')}&timezone=America/New_York&from=2025-03-08T12:00:00Z&count=2`,
    );
    expect(res.status).toBe(200);
    const parsed = parseCron('30 2 * * *', 'America/New_York');
    if (!parsed.ok) throw new Error(parsed.error);
    const expected = nextFireTimes(parsed.schedule, new Date('2025-03-08T12:00:00Z'), 2).map((d) => d.toISOString());
    expect(res.body).toEqual({ fire_times: expected });
    expect(res.body.fire_times).toHaveLength(2);
  });

  it('lists fire times strictly after `from`', async () => {
    const res = await preview(
      `cron_expr=${encodeURIComponent('0 12 * * *')}&timezone=UTC&from=2025-01-01T12:00:00Z&count=3`,
    );
    expect(res.body).toEqual({
      fire_times: ['2025-01-02T12:00:00.000Z', '2025-01-03T12:00:00.000Z', '2025-01-04T12:00:00.000Z'],
    });
  });

  it('starts from the clock by default, in UTC, 10 fire times', async () => {
    await h.cleanup();
    h = await apiHarness({ clock: manualClock('2025-05-05T05:05:05Z') });
    const res = await preview(`cron_expr=${encodeURIComponent('@daily')}`);
    expect(res.body.fire_times).toHaveLength(10);
    expect(res.body.fire_times[0]).toBe('2025-05-06T00:00:00.000Z');
  });

  it('answers 400 with the parser message for bad input', async () => {
    const cases: [string, string, string | RegExp][] = [
      [`cron_expr=${encodeURIComponent('0 0 30 2 *')}`, 'cron_expr', errorOfCron('0 0 30 2 *')],
      ['cron_expr=nonsense', 'cron_expr', errorOfCron('nonsense')],
      [`cron_expr=${encodeURIComponent('0 * * * *')}&timezone=Nowhere/City`, 'timezone', /unknown time zone/],
      [`cron_expr=${encodeURIComponent('0 * * * *')}&count=0`, 'count', /1/],
      [`cron_expr=${encodeURIComponent('0 * * * *')}&count=101`, 'count', /100/],
      [`cron_expr=${encodeURIComponent('0 * * * *')}&from=yesterday`, 'from', /date/i],
      // Outside the supported instants (a from of 0001-01-01 once started in 1804).
      [
        `cron_expr=${encodeURIComponent('0 * * * *')}&from=0001-01-01T00:00:00Z`,
        'from',
        'is 0001-01-01T00:00:00.000Z; instants from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z are supported',
      ],
      [`cron_expr=${encodeURIComponent('0 * * * *')}&from=1969-12-31T23:59:59Z`, 'from', /are supported/],
      // A step larger than its field's values is refused, naming the field.
      [
        `cron_expr=${encodeURIComponent('*/99999999999999999999 * * * *')}`,
        'cron_expr',
        /^Invalid minute field .* larger than the minute field's 60 values/,
      ],
      ['timezone=UTC', 'cron_expr', 'is required'],
    ];
    for (const [query, path, message] of cases) {
      const res = await preview(query);
      expect(res.status, query).toBe(400);
      const detail = res.body.error.details.find((d: any) => d.path === path);
      expect(detail, `${query}: ${JSON.stringify(res.body)}`).toBeDefined();
      if (typeof message === 'string') expect(detail.message).toBe(message);
      else expect(detail.message).toMatch(message);
    }
  });
});

describe('GET /healthz', () => {
  it('answers 200 when PostgreSQL and the queue answer, without authentication, and names the queue', async () => {
    const app = createApp({ ...h.deps, apiKeys: ['secret'] });
    const res = await app.request('/healthz');
    expect(res.status).toBe(200);
    const backend = h.env.backend;
    expect(await res.json()).toEqual({
      status: 'ok',
      postgres: 'ok',
      queue: 'ok',
      queue_backend: backend,
      ...(backend === 'redis' ? { redis: 'ok' } : {}),
    });
  });

  it('answers 503 within its timeout when the services hang', async () => {
    const blackhole = await listenBlackhole();
    const pool = new pg.Pool({ host: '127.0.0.1', port: blackhole.port, user: 'x', connectionTimeoutMillis: 10_000 });
    pool.on('error', () => undefined);
    const redis = new Redis({ host: '127.0.0.1', port: blackhole.port, maxRetriesPerRequest: 1, lazyConnect: false });
    redis.on('error', () => undefined);
    try {
      const app = createApp({
        ...h.deps,
        store: createStore(pool),
        queue: createQueue(redis, { prefix: '{unused}' }),
        queueBackend: 'redis',
        healthTimeoutMs: 200,
      });
      const started = Date.now();
      const res = await app.request('/healthz');
      expect(Date.now() - started).toBeLessThan(2000);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({
        status: 'degraded',
        postgres: 'error: no answer within 200 ms',
        queue: 'error: no answer within 200 ms',
        queue_backend: 'redis',
        redis: 'error: no answer within 200 ms',
      });
    } finally {
      redis.disconnect();
      await blackhole.close();
      await pool.end().catch(() => undefined);
    }
  });
});

function errorOfCron(expr: string): string {
  const parsed = parseCron(expr);
  if (parsed.ok) throw new Error(`${expr} parses`);
  return parsed.error;
}

/** A TCP server that accepts connections and never answers: a service that hangs. */
async function listenBlackhole(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
