/**
 * Roles, enumerated from the route tables themselves: every route of the API (the Hono app's own router list) and
 * every dashboard route (DASHBOARD_ROUTES) needs exactly the role the README documents, is refused with a 403 naming
 * it for each lower role, and is served for the role and above. A route added without a declared role fails here.
 */
import { accessOf } from '@jobs/api';
import { ROLES, type Role } from '@jobs/core';
import { DASHBOARD_ROUTES } from '@jobs/dashboard';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formClient, type FormClient } from '../browser/form-client';
import { bearer, keyOf, ROLE_KEYS } from '../support/role-keys';
import { apiHarness, type Harness } from './harness';

/** The README's roles table, as a rule: what each (method, path) needs. `public`: no key at all. */
function documentedApiRole(method: string, path: string): Role | 'public' {
  if (path === '/healthz') return 'public';
  if (path === '/metrics') return 'read';
  if (path === '/api/v1/audit') return 'admin';
  if (method === 'GET') return 'read';
  if (/\/(trigger|pause|resume|cancel|replay|backfill)$/.test(path)) return 'operate';
  if (/^\/api\/v1\/channels\/\{name\}\/test$/.test(path)) return 'operate';
  return 'admin';
}

/** The same table for the dashboard: a page that is the form of a change needs the change's role. */
function documentedDashboardRole(method: string, path: string): Role | 'anyone' {
  if (path.startsWith('/assets/') || path === '/login') return 'anyone';
  if (path === '/logout') return 'read';
  if (path === '/audit' || /^\/jobs\/(new|preview)$/.test(path) || /\/(delete|edit)$/.test(path)) return 'admin';
  if (method === 'GET' && /\/(cancel|backfill)$/.test(path)) return 'operate';
  if (method === 'GET') return 'read';
  if (/\/(trigger|pause|resume|cancel|replay|backfill)$/.test(path)) return 'operate';
  return 'admin';
}

let h: Harness;
let ids: { job: string; execution: string };

/** A concrete path for a route: ids of rows that exist, so a refusal cannot be a mere 404. */
function concrete(path: string): string {
  return path
    .replace(/^\/jobs\/:id(\{[^}]*\})?/, `/jobs/${ids.job}`)
    .replace(/^\/executions\/:id(\{[^}]*\})?/, `/executions/${ids.execution}`)
    .replace(/^\/lanes\/:lane(\{[^}]*\})?/, '/lanes/short')
    .replace(/\/jobs\/by-name\/:name(\{[^}]*\})?/, '/jobs/by-name/roles-probe')
    .replace(/:id(\{[^}]*\})?/g, ids.job);
}

/** Every API route as the app's router has it: method and path, and the role its handlers declare (if any). */
function apiRoutes() {
  const byRoute = new Map<string, { method: string; path: string; declared: Role | undefined }>();
  for (const r of h.app.routes) {
    if (r.method === 'ALL' || DASHBOARD_ROUTES.some((d) => d.method === r.method && d.path === r.path)) continue;
    const id = `${r.method} ${r.path}`;
    const entry = byRoute.get(id) ?? { method: r.method, path: r.path, declared: undefined };
    entry.declared ??= accessOf(r.handler)?.role;
    byRoute.set(id, entry);
  }
  return [...byRoute.values()];
}

beforeAll(async () => {
  h = await apiHarness({ apiKeys: ROLE_KEYS });
  const job = (
    await h.call('POST', '/api/v1/jobs', {
      body: { name: 'roles', command: 'echo hi', cron_expr: '@daily' },
      headers: bearer('admin'),
    })
  ).body;
  const execution = (await h.call('POST', `/api/v1/jobs/${job.id}/trigger`, { headers: bearer('admin') })).body;
  ids = { job: job.id, execution: execution.id };
});
afterAll(async () => {
  await h.cleanup();
});

describe('API routes', () => {
  it('each declares the documented role where it is defined', () => {
    const routes = apiRoutes();
    expect(routes.length).toBeGreaterThan(15);
    for (const r of routes) {
      const documented = documentedApiRole(r.method, r.path.replace(/:([a-z_]+)(\{[^}]*\})?/g, '{$1}'));
      expect(r.declared ?? (documented === 'public' ? 'public' : 'none declared'), `${r.method} ${r.path}`).toBe(
        documented === 'public' ? 'public' : documented,
      );
    }
  });

  it('refuses each role below the declared one with 403 forbidden naming it, and serves the others', async () => {
    // Admin last: its DELETE removes the job the other requests name.
    const routes = apiRoutes().filter((r) => r.declared);
    for (const role of ROLES) {
      for (const r of routes.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'))) {
        const needed = r.declared!;
        const res = await h.app.request(concrete(r.path), {
          method: r.method,
          headers: { ...bearer(role), 'Content-Type': 'application/json' },
          body: r.method === 'GET' || r.method === 'DELETE' ? undefined : '{}',
        });
        const what = `${r.method} ${r.path} as ${role}`;
        if (ROLES.indexOf(role) >= ROLES.indexOf(needed)) {
          expect(res.status, what).not.toBe(403);
          expect(res.status, what).not.toBe(401);
        } else {
          expect(res.status, what).toBe(403);
          const body = (await res.json()) as { error: { code: string; message: string } };
          expect(body.error.code, what).toBe('forbidden');
          expect(body.error.message, what).toContain(`the ${needed} role`);
        }
      }
    }
  });

  it('audits refused changes under the key name, and no key value anywhere', async () => {
    const refused = await h.call('GET', '/api/v1/audit?outcome=refused&limit=200', { headers: bearer('admin') });
    expect(refused.status).toBe(200);
    const rows = refused.body.data.filter((r: any) => r.outcome === 'refused');
    expect(
      rows.some((r: any) => r.key === 'support' && r.action === 'job.trigger' && r.target === `job:${ids.job}`),
    ).toBe(true);
    expect(rows.some((r: any) => r.key === 'ci' && r.action === 'job.delete')).toBe(true);
    expect(rows.every((r: any) => r.key !== 'platform')).toBe(true);
    const everything = JSON.stringify([refused.body, h.rec.logs, h.rec.transitions]);
    for (const k of ROLE_KEYS) expect(everything).not.toContain(k.key);
    expect(h.rec.logs.some((l) => (l.obj as any).event === 'http.request' && (l.obj as any).key === 'support')).toBe(
      true,
    );
  });

  it('answers 401 (not 403) without a key, and 404 for unknown paths whatever the role', async () => {
    expect((await h.call('POST', `/api/v1/jobs/${ids.job}/trigger`)).status).toBe(401);
    expect((await h.call('GET', '/api/v1/nowhere', { headers: bearer('read') })).status).toBe(404);
    expect((await h.call('POST', '/api/v1/nowhere', { headers: bearer('read') })).status).toBe(404);
  });
});

describe('dashboard routes', () => {
  const browsers = new Map<Role, FormClient>();
  beforeAll(async () => {
    // The API tests deleted their job: a fresh one, so allowed requests find what they name.
    const job = (
      await h.call('POST', '/api/v1/jobs', {
        body: { name: 'dash-roles', command: 'echo hi', cron_expr: '@daily' },
        headers: bearer('admin'),
      })
    ).body;
    const execution = (await h.call('POST', `/api/v1/jobs/${job.id}/trigger`, { headers: bearer('admin') })).body;
    ids = { job: job.id, execution: execution.id };
    for (const role of ROLES) {
      const b = formClient(h.app);
      expect((await b.signIn(keyOf(role).key)).status).toBe(303);
      browsers.set(role, b);
    }
  });

  it('shows each role only the controls it may use', async () => {
    const page = async (role: Role, path: string) => (await browsers.get(role)!.request('GET', path)).text;
    const controls = (html: string) => ({
      newJob: html.includes('href="/jobs/new"'),
      run: html.includes(`action="/jobs/${ids.job}/trigger"`),
      pause: html.includes(`action="/jobs/${ids.job}/pause"`),
      del: html.includes(`href="/jobs/${ids.job}/delete"`),
      edit: html.includes(`href="/jobs/${ids.job}/edit"`),
      backfill: html.includes(`href="/jobs/${ids.job}/backfill"`),
      cancel: html.includes(`href="/executions/${ids.execution}/cancel"`),
      lanes: html.includes('action="/lanes/short/pause"'),
      audit: html.includes('href="/audit"'),
    });
    const seen = async (role: Role) => {
      const [jobs, job, execution, lanes] = await Promise.all([
        page(role, '/jobs'),
        page(role, `/jobs/${ids.job}`),
        page(role, `/executions/${ids.execution}`),
        page(role, '/lanes'),
      ]);
      const all = controls(jobs + job + execution + lanes);
      expect(jobs + job, role).toContain(`${keyOf(role).name} (${role})`);
      return all;
    };
    expect(await seen('read')).toEqual({
      newJob: false,
      run: false,
      pause: false,
      del: false,
      edit: false,
      backfill: false,
      cancel: false,
      lanes: false,
      audit: false,
    });
    expect(await seen('operate')).toEqual({
      newJob: false,
      run: true,
      pause: true,
      del: false,
      edit: false,
      backfill: true,
      cancel: true,
      lanes: true,
      audit: false,
    });
    expect(await seen('admin')).toEqual({
      newJob: true,
      run: true,
      pause: true,
      del: true,
      edit: true,
      backfill: true,
      cancel: true,
      lanes: true,
      audit: true,
    });
  });

  it('shows the admin the audit trail and the open sessions, with names and never keys', async () => {
    const html = (await browsers.get('admin')!.request('GET', '/audit?action=session.sign_in')).text;
    expect(html).toContain('Dashboard sessions open now</caption>');
    for (const k of ROLE_KEYS) {
      expect(html).toContain(`<td data-label="Key">${k.name}</td>`);
      expect(html).not.toContain(k.key);
    }
    const filtered = (await browsers.get('admin')!.request('GET', '/audit?key=ci&action=job.delete')).text;
    expect(filtered).toContain('refused');
    expect(filtered).not.toContain('session.sign_in</td>');
  });

  it('shows a request id on one line in the audit table, the whole id kept in its text and tooltip', async () => {
    const requestId = 'e1c7a9d2-53b4-4f0e-9a61-2c8d0b7f4e35';
    const paused = await h.call('POST', `/api/v1/jobs/${ids.job}/pause`, {
      headers: { ...bearer('admin'), 'X-Request-Id': requestId },
    });
    expect(paused.status).toBe(200);
    await h.call('POST', `/api/v1/jobs/${ids.job}/resume`, { headers: bearer('admin') });
    const html = (await browsers.get('admin')!.request('GET', '/audit?action=job.pause')).text;
    expect(html).toContain(
      `<td data-label="Request"><code class="clip-id" title="${requestId}">${requestId}</code></td>`,
    );
    const css = (await browsers.get('admin')!.request('GET', '/assets/dashboard.css')).text;
    expect(css).toMatch(/\.clip-id \{[^}]*white-space: nowrap;[^}]*\}/);
    expect(css).toMatch(/\.clip-id \{[^}]*text-overflow: ellipsis;[^}]*\}/);
  });

  it('tells a read key opening the audit page which role it needs, not that nothing was changed', async () => {
    const res = await browsers.get('read')!.request('GET', '/audit');
    expect(res.status).toBe(403);
    expect(res.text).toContain(
      'This needs the admin role; you signed in with support, a read key. Sign in with a key of the admin role to open this page.',
    );
    expect(res.text).not.toMatch(/nothing was changed/i);
  });

  it('each declares the documented role', () => {
    for (const r of DASHBOARD_ROUTES)
      expect(r.role, `${r.method} ${r.path}`).toBe(documentedDashboardRole(r.method, r.path));
  });

  it('refuses each role below the declared one, server-side, and serves the others', async () => {
    const guarded = DASHBOARD_ROUTES.filter((r) => r.role !== 'anyone' && r.path !== '/logout');
    for (const role of ROLES) {
      const b = browsers.get(role)!;
      const csrf = await b.csrf('/');
      for (const r of [...guarded].sort(
        (a, b2) => Number(a.path.endsWith('/delete')) - Number(b2.path.endsWith('/delete')),
      )) {
        const path = concrete(r.path) + (r.access === 'fragment' ? '?cron_expr=%40daily' : '');
        const res = await b.request(
          r.method,
          path,
          r.method === 'POST'
            ? { form: { _csrf: csrf, ids: ids.execution, name: `dash-${role}`, command: 'echo' } }
            : {},
        );
        const what = `${r.method} ${path} as ${role}`;
        if (ROLES.indexOf(role) >= ROLES.indexOf(r.role as Role)) expect(res.status, what).not.toBe(403);
        else {
          expect(res.status, what).toBe(403);
          expect(res.text, what).toContain(`This needs the ${r.role} role`);
          // Only a refused change says nothing was changed: opening a page attempted none.
          if (r.method === 'POST') expect(res.text, what).toContain('Nothing was changed.');
          else expect(res.text, what).not.toMatch(/nothing was changed/i);
        }
      }
    }
    // The refusals happened before anything ran: the job read and operate keys tried to delete is still there.
    const audit = await h.call('GET', '/api/v1/audit?key=ci&action=job.delete', { headers: bearer('admin') });
    expect(audit.body.data.some((r: any) => r.outcome === 'refused')).toBe(true);
  });
});
