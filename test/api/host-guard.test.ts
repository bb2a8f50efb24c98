/**
 * Open mode is loopback-only in every sense: DNS rebinding (a foreign Host) and cross-site requests (Origin,
 * Sec-Fetch-Site) are refused with 403, on the API and the dashboard, through app.request and a real HTTP server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { serve } from '@hono/node-server';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { apiHarness, type Harness } from './harness';

let h: Harness;
afterEach(async () => {
  await h.cleanup();
});

const jobBody = () => ({ name: `job-${Math.random().toString(36).slice(2)}`, handler: 'noop' });
const jobCount = async () => Number((await h.env.pool.query('SELECT count(*) FROM jobs')).rows[0].count);

describe('open mode (no API_KEYS)', () => {
  it('answers loopback hosts only, on the API and the dashboard', async () => {
    h = await apiHarness();
    for (const host of [
      '127.0.0.1:8080',
      'localhost',
      'localhost:8080',
      'LOCALHOST.',
      '[::1]:8080',
      'dev.localhost',
      '127.1.2.3',
    ]) {
      expect((await h.call('GET', '/api/v1/jobs', { headers: { host } })).status, host).toBe(200);
    }
    for (const host of [
      'attacker.example',
      'attacker.example:8080',
      '127.0.0.1.attacker.example',
      '10.0.0.5',
      '[::2]',
      'localhost.attacker.example',
    ]) {
      const res = await h.call('GET', '/api/v1/jobs', { headers: { host } });
      expect(res.status, host).toBe(403);
      expect(res.body.error.code).toBe('forbidden_host');
    }
    expect((await h.call('GET', '/', { headers: { host: 'attacker.example' } })).status).toBe(403);
    expect((await h.call('GET', 'http://attacker.example/api/v1/jobs')).status).toBe(403);
    // Probes address a server by IP: health stays open.
    expect((await h.call('GET', '/healthz', { headers: { host: '10.0.0.5' } })).status).toBe(200);
  });

  it('creates nothing for a rebinding page: POST with a foreign Host is refused before it is read', async () => {
    h = await apiHarness();
    const res = await h.call('POST', '/api/v1/jobs', {
      headers: { host: 'attacker.example' },
      body: { ...jobBody(), command: 'id' },
    });
    expect(res.status).toBe(403);
    expect(await jobCount()).toBe(0);
  });

  it('refuses state changes from another site (Origin, Sec-Fetch-Site), but not reads', async () => {
    h = await apiHarness();
    for (const headers of [
      { origin: 'http://attacker.example' },
      { origin: 'null' },
      { origin: 'not a url' },
      { 'sec-fetch-site': 'cross-site' },
    ] as Record<string, string>[]) {
      const res = await h.call('POST', '/api/v1/jobs', { headers, body: jobBody() });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.body.error.code).toBe('cross_site_request');
    }
    expect(await jobCount()).toBe(0);
    expect(
      (
        await h.call('GET', '/api/v1/jobs', {
          headers: { origin: 'http://attacker.example', 'sec-fetch-site': 'cross-site' },
        })
      ).status,
    ).toBe(200);
    for (const headers of [
      { origin: 'http://127.0.0.1:8080' },
      { origin: 'http://localhost:3000' },
      { 'sec-fetch-site': 'same-origin' },
      {},
    ] as Record<string, string>[]) {
      expect((await h.call('POST', '/api/v1/jobs', { headers, body: jobBody() })).status, JSON.stringify(headers)).toBe(
        201,
      );
    }
    // The dashboard's forms are state changes too.
    const dashboard = await h.call('POST', '/jobs/new', {
      headers: { origin: 'http://attacker.example', 'content-type': 'application/x-www-form-urlencoded' },
      raw: 'name=x',
    });
    expect(dashboard.status).toBe(403);
  });

  it('holds on a real HTTP server too (Host header, absolute-form request target)', async () => {
    h = await apiHarness();
    const server = serve({ fetch: h.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => server.once('listening', r));
    const port = (server.address() as AddressInfo).port;
    const send = (path: string, host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET', headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', reject);
        req.end();
      });
    try {
      expect(await send('/api/v1/jobs', `127.0.0.1:${port}`)).toBe(200);
      expect(await send('/api/v1/jobs', 'attacker.example')).toBe(403);
      expect(await send('http://attacker.example/api/v1/jobs', `127.0.0.1:${port}`)).toBe(403);
      expect(await send(`http://127.0.0.1:${port}/api/v1/jobs`, 'attacker.example')).toBe(403);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('with API keys', () => {
  const auth = { authorization: 'Bearer k' };

  it('applies the same Host check unless ALLOWED_HOSTS lists the name', async () => {
    h = await apiHarness({ apiKeys: ['k'] });
    expect((await h.call('GET', '/api/v1/jobs', { headers: { ...auth, host: 'api.example.com' } })).status).toBe(403);
    expect((await h.call('GET', '/api/v1/jobs', { headers: { ...auth, host: 'localhost' } })).status).toBe(200);
    await h.cleanup();
    h = await apiHarness({ apiKeys: ['k'], allowedHosts: ['api.example.com'] });
    expect((await h.call('GET', '/api/v1/jobs', { headers: { ...auth, host: 'api.example.com' } })).status).toBe(200);
    expect((await h.call('GET', '/api/v1/jobs', { headers: { ...auth, host: 'api.example.com:443' } })).status).toBe(
      200,
    );
    const other = await h.call('GET', '/api/v1/jobs', { headers: { ...auth, host: 'other.example.com' } });
    expect(other.status).toBe(403);
    expect(other.body.error.message).toMatch(/ALLOWED_HOSTS/);
    // The host check comes before authentication: a foreign host learns nothing, key or not.
    expect((await h.call('GET', '/api/v1/jobs', { headers: { host: 'other.example.com' } })).status).toBe(403);
    const crossSite = await h.call('POST', '/api/v1/jobs', {
      headers: { ...auth, host: 'api.example.com', origin: 'https://evil.example' },
      body: jobBody(),
    });
    expect(crossSite.status).toBe(403);
    expect(
      (
        await h.call('POST', '/api/v1/jobs', {
          headers: { ...auth, host: 'api.example.com', origin: 'https://api.example.com' },
          body: jobBody(),
        })
      ).status,
    ).toBe(201);
    await h.cleanup();
    h = await apiHarness({ apiKeys: ['k'], allowedHosts: ['*'] });
    expect((await h.call('GET', '/api/v1/jobs', { headers: { ...auth, host: 'anything.example' } })).status).toBe(200);
  });
});
