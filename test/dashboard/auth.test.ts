/**
 * Dashboard authentication, in process: every route of DASHBOARD_ROUTES (the one list the app is built from) refuses
 * a request without a valid session, forged, expired and tampered cookies are refused, actions need the CSRF token
 * of their session, and the API key never comes back in a page, a URL, a cookie or a log line.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DASHBOARD_ROUTES } from '@jobs/dashboard';
import { newSessionToken, SESSION_TTL_MS } from '../../packages/dashboard/src/session';
import { formClient } from '../browser/form-client';
import { apiHarness, type Harness } from '../api/harness';

const KEY = 'dash-k3y-0ne-7f3a9c';
const OTHER_KEY = 'second-key-b81e';

let h: Harness;
afterEach(async () => {
  await h.cleanup();
});

/** The form client with the default sign-in key. */
function browser(harness: Harness, headers: Record<string, string> = {}) {
  const client = formClient(harness.app, headers);
  return { ...client, signIn: (key = KEY) => client.signIn(key) };
}

/** A concrete path for a route: `:id` becomes an id that exists, so a refusal cannot be a mere 404. */
function concrete(path: string, ids: { job: string; execution: string }): string {
  return path
    .replace(/^\/jobs\/:id\{[^}]*\}/, `/jobs/${ids.job}`)
    .replace(/^\/executions\/:id\{[^}]*\}/, `/executions/${ids.execution}`)
    .replace(/^\/lanes\/:lane\{[^}]*\}/, '/lanes/short');
}

describe('with API keys', () => {
  beforeEach(async () => {
    h = await apiHarness({ apiKeys: [KEY, OTHER_KEY] });
  });

  it('builds every dashboard route from DASHBOARD_ROUTES, so none can miss the gate', () => {
    const registered = h.app.routes
      .filter(
        (r) => r.method !== 'ALL' && !r.path.startsWith('/api/v1') && r.path !== '/healthz' && r.path !== '/metrics',
      )
      .map((r) => `${r.method} ${r.path}`);
    expect(new Set(registered)).toEqual(new Set(DASHBOARD_ROUTES.map((r) => `${r.method} ${r.path}`)));
    expect(DASHBOARD_ROUTES.filter((r) => r.access === 'public').map((r) => r.path)).toEqual([
      '/assets/dashboard.css',
      '/assets/dashboard.js',
    ]);
  });

  it('refuses every page, fragment and action without a valid session, and changes nothing', async () => {
    const ids = await seedWithKey(h);
    const signedIn = browser(h);
    await signedIn.signIn();
    const live = signedIn.jar.get('jobs_session')!;
    const cookies: [label: string, cookie: string | null][] = [
      ['none', null],
      ['garbage', 'jobs_session=not-a-session'],
      ['well-formed but unknown', `jobs_session=${newSessionToken().cookie}`],
      ['raw key as cookie', `jobs_session=${KEY}`],
      ['valid but https name over http', `__Host-jobs_session=${live}`],
    ];
    const guarded = DASHBOARD_ROUTES.filter((r) => r.access !== 'public' && r.access !== 'login');
    expect(guarded.length).toBeGreaterThan(15);
    for (const route of guarded) {
      const path = concrete(route.path, ids);
      for (const [label, cookie] of cookies) {
        const headers: Record<string, string> = cookie ? { Cookie: cookie } : {};
        const body =
          route.method === 'POST'
            ? new URLSearchParams({ _csrf: 'x'.repeat(43), ids: ids.execution, name: 'evil', command: 'id' }).toString()
            : undefined;
        if (body) headers['Content-Type'] = 'application/x-www-form-urlencoded';
        const res = await h.app.request(path, { method: route.method, headers, body });
        const what = `${route.method} ${path} (${route.access}, cookie: ${label})`;
        if (route.access === 'page') {
          expect(res.status, what).toBe(303);
          expect(res.headers.get('location'), what).toMatch(/^\/login(\?next=%2F.*)?$/);
          const fragment = await h.app.request(path, { headers: { ...headers, 'X-Dashboard-Fragment': '1' } });
          expect(fragment.status, `${what} as a fragment`).toBe(401);
        } else {
          expect(res.status, what).toBe(401);
        }
      }
    }
    // Nothing happened: the job is still there and active, with the one execution seeded.
    const job = await h.call('GET', `/api/v1/jobs/${ids.job}`, { headers: { Authorization: `Bearer ${KEY}` } });
    expect(job.body).toMatchObject({ status: 'active', next_run_at: expect.any(String) });
    const executions = await h.call('GET', '/api/v1/executions', { headers: { Authorization: `Bearer ${KEY}` } });
    expect(executions.body.data.map((e: any) => [e.id, e.status])).toEqual([[ids.execution, 'queued']]);

    // The same requests with a session are served (so the refusals above were the gate's).
    const b = browser(h);
    expect((await b.signIn()).status).toBe(303);
    for (const route of guarded.filter((r) => r.method === 'GET')) {
      const res = await b.request(
        'GET',
        concrete(route.path, ids) + (route.access === 'fragment' ? '?cron_expr=%40daily' : ''),
      );
      expect(res.status, `${route.path} with a session`).toBe(200);
    }
  });

  it('accepts a session only by its exact token, and ends it when its key is removed', async () => {
    const b = browser(h);
    await b.signIn(OTHER_KEY);
    const session = b.jar.get('jobs_session')!;
    expect(session).toMatch(/^s2\.[A-Za-z0-9_-]{43}$/);
    expect((await b.request('GET', '/')).status).toBe(200);
    const token = session.slice(3);
    const variants = [
      `s2.${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, // another token
      `s1.${token}`,
      `${session}.extra`,
      token,
    ];
    for (const value of variants) {
      const res = await h.app.request('/jobs', { headers: { Cookie: `jobs_session=${value}` } });
      expect(res.status, value).toBe(303);
    }
    // The table holds a hash of the token and a fingerprint of the key, never either of them.
    const { rows } = await h.env.pool.query('SELECT * FROM dashboard_sessions');
    const stored = JSON.stringify(
      rows.map((r) => Object.values(r).map((v) => (Buffer.isBuffer(v) ? v.toString('hex') : String(v)))),
    );
    for (const secret of [token, OTHER_KEY, Buffer.from(OTHER_KEY).toString('hex'), Buffer.from(token).toString('hex')])
      expect(stored).not.toContain(secret);
    // The same database with OTHER_KEY no longer configured: the session ends, and stays ended if the key comes back.
    const narrowed = await apiHarness({ apiKeys: [KEY], store: h.env.store });
    try {
      expect((await narrowed.app.request('/jobs', { headers: { Cookie: `jobs_session=${session}` } })).status).toBe(
        303,
      );
      expect((await h.app.request('/jobs', { headers: { Cookie: `jobs_session=${session}` } })).status).toBe(303);
    } finally {
      await narrowed.cleanup();
    }
  });

  it('expires sessions after 12 hours', async () => {
    let now = new Date('2030-01-01T00:00:00Z');
    const clocked = await apiHarness({ apiKeys: [KEY], clock: { now: () => new Date(now) } });
    try {
      const b = browser(clocked);
      await b.signIn();
      expect(b.setCookies.find((c) => c.startsWith('jobs_session='))).toMatch(/Max-Age=43200/);
      now = new Date(now.getTime() + SESSION_TTL_MS - 1000);
      expect((await b.request('GET', '/workers')).status).toBe(200);
      now = new Date(now.getTime() + 2000);
      expect((await b.request('GET', '/workers')).status).toBe(303);
    } finally {
      await clocked.cleanup();
    }
  });

  it('refuses an action with a missing, wrong or foreign CSRF token', async () => {
    const ids = await seedWithKey(h);
    const alice = browser(h);
    await alice.signIn();
    const bob = browser(h);
    await bob.signIn();
    const token = await alice.csrf();
    expect(token).not.toBe(await bob.csrf());
    const pause = `/jobs/${ids.job}/pause`;
    const forms: Record<string, string>[] = [
      {},
      { _csrf: '' },
      { _csrf: 'wrong' },
      { _csrf: await bob.csrf() },
      { _csrf: `${token}x` },
    ];
    for (const form of forms) {
      const res = await alice.request('POST', pause, { form });
      expect(res.status, JSON.stringify(form)).toBe(403);
    }
    // Any other body type reads as an empty form, so it has no token either.
    const json = await alice.request('POST', pause, { headers: { 'Content-Type': 'application/json' } });
    expect(json.status).toBe(403);
    expect(
      (await h.call('GET', `/api/v1/jobs/${ids.job}`, { headers: { Authorization: `Bearer ${KEY}` } })).body.status,
    ).toBe('active');

    const ok = await alice.request('POST', pause, { form: { _csrf: token } });
    expect(ok.status).toBe(303);
    expect(
      (await h.call('GET', `/api/v1/jobs/${ids.job}`, { headers: { Authorization: `Bearer ${KEY}` } })).body.status,
    ).toBe('paused');
  });

  it('never echoes the key: not in the page, the redirect, a cookie or the log', async () => {
    const b = browser(h);
    // A refused key redirects back to the form (Post/Redirect/Get: a reload never posts the key again).
    const wrong = await b.signIn('wrong-key-Q9x');
    expect(wrong.status).toBe(303);
    expect(wrong.headers.get('location')).toBe('/login');
    const refused = await b.request('GET', '/login');
    expect(refused.status).toBe(200);
    expect(refused.text).toContain('<title>Error: sign in');
    expect(refused.text).toMatch(
      /<p class="field-error" id="key-error" role="alert">That key is not one of the configured API keys.<\/p>/,
    );
    expect(refused.text).not.toContain('wrong-key-Q9x');
    expect(refused.text).toMatch(/<input[^>]*name="key"(?![^>]*value=)[^>]*aria-invalid="true"[^>]*>/);
    expect((await b.request('GET', '/login')).text, 'the notice shows once').not.toContain('key-error');
    const empty = await b.signIn('');
    expect(empty.headers.get('location')).toBe('/login');
    expect((await b.request('GET', '/login')).text).toContain('Enter an API key.');
    const withNext = await b.request('POST', '/login', {
      form: { key: 'nope', _csrf: await b.csrf('/login?next=%2Fjobs'), next: '/jobs' },
    });
    expect(withNext.headers.get('location')).toBe('/login?next=%2Fjobs');

    const ok = await b.signIn();
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/');
    for (const page of ['/', '/jobs', '/jobs/new', '/executions', '/dead', '/workers']) {
      expect((await b.request('GET', page)).text, page).not.toContain(KEY);
    }
    const encodings = [
      KEY,
      encodeURIComponent(KEY),
      Buffer.from(KEY).toString('base64'),
      Buffer.from(KEY).toString('base64url'),
      Buffer.from(KEY).toString('hex'),
    ];
    for (const line of b.setCookies) for (const form of encodings) expect(line).not.toContain(form);
    const session = b.setCookies.find((c) => c.startsWith('jobs_session='))!;
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/SameSite=Strict/);
    expect(session).toMatch(/Path=\//);
    expect(session).not.toMatch(/Secure/);
    const logged = JSON.stringify(h.rec.logs);
    expect(logged).not.toContain(KEY);
    expect(logged).not.toContain('wrong-key-Q9x');
    expect(logged).toContain('dashboard.login_failed');

    // The session grants the dashboard only, never the API.
    const api = await h.app.request('/api/v1/jobs', {
      headers: { Cookie: `jobs_session=${b.jar.get('jobs_session')}` },
    });
    expect(api.status).toBe(401);
  });

  it('marks cookies Secure with the __Host- prefix behind https (X-Forwarded-Proto)', async () => {
    const b = browser(h, { 'X-Forwarded-Proto': 'https' });
    await b.signIn();
    const session = b.setCookies.find((c) => c.startsWith('__Host-jobs_session='))!;
    expect(session).toMatch(/; Secure/);
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/SameSite=Strict/);
    expect(session).not.toMatch(/Domain=/);
    expect(b.setCookies.every((c) => /; Secure/.test(c))).toBe(true);
    expect((await b.request('GET', '/jobs')).status).toBe(200);
  });

  it('checks the sign-in form too, and sends people back only to local paths', async () => {
    const noToken = await h.app.request('/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ key: KEY }).toString(),
    });
    expect(noToken.status).toBe(403);
    expect(noToken.headers.getSetCookie().some((c) => c.startsWith('jobs_session='))).toBe(false);

    for (const [next, expected] of [
      ['/jobs?status=paused', '/jobs?status=paused'],
      ['//evil.example/x', '/'],
      ['https://evil.example/', '/'],
      ['/\\evil.example', '/'],
      ['/login', '/'],
    ] as const) {
      const b = browser(h);
      const token = await b.csrf(`/login?next=${encodeURIComponent(next)}`);
      const res = await b.request('POST', '/login', { form: { key: KEY, _csrf: token, next } });
      expect(res.headers.get('location'), next).toBe(expected);
    }
  });

  it('signs out: the cookie is cleared and the pages want a session again', async () => {
    const b = browser(h);
    await b.signIn();
    const res = await b.request('POST', '/logout', { form: { _csrf: await b.csrf() } });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/login');
    expect(b.setCookies.filter((c) => /^jobs_session=;.*Max-Age=0/.test(c))).toHaveLength(1);
    expect(b.setCookies.filter((c) => /^jobs_draft=;.*Max-Age=0.*Path=\/jobs\/new/.test(c))).toHaveLength(1);
    expect(b.jar.has('jobs_session')).toBe(false);
    expect((await b.request('GET', '/jobs')).status).toBe(303);
    expect((await b.request('GET', '/login')).text).toContain('Signed out.');
  });

  it('ends the session everywhere at sign-out: a copied cookie dies with it', async () => {
    const b = browser(h);
    await b.signIn();
    const copy = b.jar.get('jobs_session')!;
    const elsewhere = await h.app.request('/jobs', { headers: { Cookie: `jobs_session=${copy}` } });
    expect(elsewhere.status).toBe(200);
    await b.request('POST', '/logout', { form: { _csrf: await b.csrf('/') } });
    for (const path of ['/jobs', '/', '/workers']) {
      expect((await h.app.request(path, { headers: { Cookie: `jobs_session=${copy}` } })).status, path).toBe(303);
    }
    const { rows } = await h.env.pool.query(
      `SELECT action, key_name, outcome FROM audit_log WHERE action LIKE 'session.%' ORDER BY id`,
    );
    expect(rows).toEqual([
      { action: 'session.sign_in', key_name: 'key1', outcome: 'ok' },
      { action: 'session.sign_out', key_name: 'key1', outcome: 'ok' },
    ]);
  });

  it('sends the security headers with every page', async () => {
    const b = browser(h);
    for (const path of ['/login', '/assets/dashboard.css']) {
      const res = await b.request('GET', path);
      expect(res.headers.get('content-security-policy'), path).toContain("script-src 'self'");
      expect(res.headers.get('x-frame-options')).toBe('DENY');
    }
    await b.signIn();
    const page = await b.request('GET', '/');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.text).not.toMatch(/<script>|style="/);
  });
});

describe('without API keys', () => {
  beforeEach(async () => {
    h = await apiHarness({ apiKeys: [] });
  });

  it('is open, says so in a banner, and still wants the CSRF token for actions', async () => {
    const job = await h.createJob({ name: 'open' });
    const b = browser(h);
    const page = await b.request('GET', '/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Open dashboard.');
    expect(page.text).not.toContain('Sign out');
    expect((await b.request('GET', '/login')).status).toBe(303);

    // A page on another site cannot post here: it has neither the cookie nor the token.
    const forged = await h.app.request(`/jobs/${job.id}/trigger`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: '_csrf=guess',
    });
    expect(forged.status).toBe(403);
    expect((await b.request('POST', `/jobs/${job.id}/trigger`, { form: { _csrf: 'guess' } })).status).toBe(403);
    const ok = await b.request('POST', `/jobs/${job.id}/trigger`, { form: { _csrf: await b.csrf() } });
    expect(ok.status).toBe(303);
    expect((await h.call('GET', `/api/v1/jobs/${job.id}/executions`)).body.data).toHaveLength(1);
  });
});

/** A job and one queued execution, created through the REST API with the key. */
async function seedWithKey(harness: Harness): Promise<{ job: string; execution: string }> {
  const auth = { Authorization: `Bearer ${KEY}` };
  const job = (
    await harness.call('POST', '/api/v1/jobs', {
      body: { name: 'guarded', command: 'echo hi', cron_expr: '@daily' },
      headers: auth,
    })
  ).body;
  const execution = (await harness.call('POST', `/api/v1/jobs/${job.id}/trigger`, { headers: auth })).body;
  return { job: job.id, execution: execution.id };
}
