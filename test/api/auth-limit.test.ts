/**
 * The API's failed-authentication limit: 10 wrong keys a minute per source address (API and /metrics together),
 * then 429 with Retry-After for every request from that address, the right key included, until the minute ends.
 * Requests without a key are not counted; other addresses keep their own budget; the tracked addresses are bounded.
 */
import { authLimiter } from '@jobs/api';
import { afterEach, describe, expect, it } from 'vitest';
import { apiHarness, type Harness } from './harness';

const KEY = 'auth-limit-key-5e0c2a9d';
const METRICS_TOKEN = 'metrics-token-7a1d93c4e2';

let h: Harness | undefined;
let now = Date.parse('2026-06-01T12:00:00Z');
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

async function start(overrides: { authFailureLimit?: number } = {}) {
  now = Date.parse('2026-06-01T12:00:00Z');
  h = await apiHarness({
    apiKeys: [KEY],
    metricsToken: METRICS_TOKEN,
    clock: { now: () => new Date(now) },
    ...overrides,
  });
  return h;
}

/** A request from `address` (the socket's peer, as Node's server gives it). */
async function from(address: string, path: string, key?: string) {
  const headers: Record<string, string> = key === undefined ? {} : { Authorization: `Bearer ${key}` };
  const res = await h!.app.request(path, { headers }, { incoming: { socket: { remoteAddress: address } } });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text.startsWith('{') ? JSON.parse(text) : text };
}

describe('failed authentication limit', () => {
  it('answers 429 with Retry-After after 10 wrong keys from one address, to the right key too', async () => {
    await start();
    for (let i = 0; i < 10; i++) expect((await from('198.51.100.7', '/api/v1/jobs', `wrong-${i}`)).status).toBe(401);
    for (const key of ['wrong-10', KEY]) {
      const limited = await from('198.51.100.7', '/api/v1/jobs', key);
      expect(limited.status).toBe(429);
      expect(limited.body.error.code).toBe('too_many_failed_authentications');
      expect(limited.body.error.message).toMatch(/try again in 60 seconds/);
      expect(limited.headers.get('retry-after')).toBe('60');
    }
    // Another address keeps its own budget, whatever X-Forwarded-For would say.
    expect((await from('198.51.100.8', '/api/v1/jobs', KEY)).status).toBe(200);

    // Retry-After counts down with the window, which opened at the first failure and does not move.
    now += 45_500;
    expect((await from('198.51.100.7', '/api/v1/jobs', KEY)).headers.get('retry-after')).toBe('15');
    now += 14_500;
    expect((await from('198.51.100.7', '/api/v1/jobs', KEY)).status).toBe(200);
    expect((await from('198.51.100.7', '/api/v1/jobs', 'wrong-again')).status).toBe(401);
  });

  it('does not count requests without a key, and counts a header that is not a bearer token', async () => {
    await start();
    for (let i = 0; i < 15; i++) expect((await from('198.51.100.9', '/api/v1/jobs')).status).toBe(401);
    expect((await from('198.51.100.9', '/api/v1/jobs', KEY)).status).toBe(200);
    for (let i = 0; i < 10; i++) {
      const res = await h!.app.request(
        '/api/v1/jobs',
        { headers: { Authorization: `Basic ${btoa(`x:${i}`)}` } },
        { incoming: { socket: { remoteAddress: '198.51.100.10' } } },
      );
      expect(res.status).toBe(401);
    }
    expect((await from('198.51.100.10', '/api/v1/jobs', KEY)).status).toBe(429);
  });

  it('shares one budget between /api/v1 and /metrics, and takes its size from AUTH_FAILURE_LIMIT', async () => {
    await start({ authFailureLimit: 3 });
    expect((await from('198.51.100.11', '/metrics', 'wrong-1')).status).toBe(401);
    expect((await from('198.51.100.11', '/api/v1/jobs', 'wrong-2')).status).toBe(401);
    expect((await from('198.51.100.11', '/metrics', 'wrong-3')).status).toBe(401);
    expect((await from('198.51.100.11', '/metrics', METRICS_TOKEN)).status).toBe(429);
    expect((await from('198.51.100.11', '/api/v1/jobs', KEY)).status).toBe(429);
    expect((await from('198.51.100.12', '/metrics', METRICS_TOKEN)).status).toBe(200);
  });

  it('never logs or echoes the keys tried', async () => {
    await start();
    for (let i = 0; i < 12; i++) await from('198.51.100.13', '/api/v1/jobs', `secret-guess-${i}`);
    expect(JSON.stringify(h!.rec.logs)).not.toContain('secret-guess');
    expect(h!.rec.logs.some((l: any) => l.obj.event === 'auth.limited' && l.obj.source === '198.51.100.13')).toBe(true);
  });
});

describe('authLimiter', () => {
  it('tracks at most `capacity` addresses, dropping the oldest windows first', () => {
    let t = 0;
    const limiter = authLimiter({ max: 2, windowMs: 60_000, capacity: 100, now: () => t });
    for (let i = 0; i < 1000; i++) {
      t += 10;
      limiter.failed(`10.0.${i >> 8}.${i & 255}`);
      limiter.failed(`10.0.${i >> 8}.${i & 255}`);
      expect(limiter.size()).toBeLessThanOrEqual(100);
    }
    // The newest addresses are still limited; the oldest were forgotten to make room.
    expect(limiter.retryAfterMs('10.0.3.231')).toBeGreaterThan(0);
    expect(limiter.retryAfterMs('10.0.0.0')).toBe(0);
    // A window that closed opens again on the next failure, counting from one.
    t += 60_000;
    expect(limiter.retryAfterMs('10.0.3.231')).toBe(0);
    limiter.failed('10.0.3.231');
    expect(limiter.retryAfterMs('10.0.3.231')).toBe(0);
  });
});
