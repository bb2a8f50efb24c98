/**
 * @module dashboard/gate — who may use a dashboard route, decided before its handler runs.
 *
 * Every route also declares the least role it needs (DASHBOARD_ROUTES): a signed-in key below it gets a 403 naming
 * the role (and, for a change, an audit row of the attempt), even if the page hid the control.
 *
 * - `page`: needs a session; without one, a redirect to /login (or 401 for the script's fragment requests).
 * - `fragment`: needs a session; without one, 401.
 * - `action` (POST): needs a session (401 without), then a body within the size limit and the CSRF token (403).
 * - `login`: the sign-in form itself; its POST is CSRF-checked with the double-submit cookie.
 * - `public`: the stylesheet and the script.
 * With no API keys configured nothing needs a session, but actions still need the CSRF token (a page on another
 * site must not be able to create a job that runs a command on this machine).
 */
import type { Context } from 'hono';
import { ApiError, OPEN_PRINCIPAL, refuseBelow, type ApiDeps, type RouteAccess } from '@jobs/api';
import type { Role } from '@jobs/core';
import { readCookie, writeCookie } from './cookies';
import { takeFlash } from './flash';
import { isFragment } from './render';
import {
  isFormToken,
  loadSession,
  newFormToken,
  sessionCsrfToken,
  tokensEqual,
  type Session,
  type SessionKeys,
} from './session';
import type { View } from './view';

type Access = 'public' | 'login' | 'page' | 'fragment' | 'action';

/** What a route declares: how it is reached, and the least role (`anyone`: the sign-in form and the assets). */
export interface RouteGuard {
  access: Access;
  role: Role | 'anyone';
  action?: RouteAccess['action'];
}

export type Admission =
  | { ok: true; view: View; form: URLSearchParams; session: Session | null }
  | { ok: false; status: 401 | 403; view: View; reason: string }
  | { ok: false; status: 303; location: string };

/** Reads an urlencoded body up to `limit` bytes (413 beyond). Any other content type reads as an empty form. */
async function readForm(c: Context, limit: number): Promise<URLSearchParams> {
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded' || !c.req.raw.body) return new URLSearchParams();
  const tooLarge = () => new ApiError(413, 'payload_too_large', `request body exceeds ${limit} bytes`);
  if (Number(c.req.header('content-length')) > limit) throw tooLarge();
  const reader = c.req.raw.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export async function admit(c: Context, guard: RouteGuard, deps: ApiDeps, keys: SessionKeys): Promise<Admission> {
  const { access } = guard;
  const now = deps.clock.now();
  const open = keys.keys.length === 0;
  const session = open || access === 'public' ? null : await loadSession(deps, keys, readCookie(c, 'session'), now);
  const fragment = isFragment(c);
  const principal = open ? OPEN_PRINCIPAL : session ? { name: session.key.name, role: session.key.role } : null;
  const base = {
    path: c.req.path,
    open,
    signedIn: session !== null,
    principal,
    now,
    requestId: c.get('requestId') as string,
    flash: null,
  };

  let csrf: string;
  if (session) {
    csrf = sessionCsrfToken(session);
  } else {
    const existing = readCookie(c, 'form');
    csrf = isFormToken(existing) ? existing : newFormToken();
    if (csrf !== existing && access !== 'public') writeCookie(c, 'form', csrf);
  }
  const view: View = { ...base, csrf };

  const needsSession = access === 'page' || access === 'fragment' || access === 'action';
  if (needsSession && !open && !session) {
    if (access === 'page' && !fragment && c.req.method === 'GET') {
      const next = c.req.path + (new URL(c.req.url).search || '');
      return { ok: false, status: 303, location: next === '/' ? '/login' : `/login?next=${encodeURIComponent(next)}` };
    }
    return {
      ok: false,
      status: 401,
      view,
      reason: 'You are not signed in, or your session has expired. Sign in again.',
    };
  }

  let form = new URLSearchParams();
  if (c.req.method === 'POST' && access !== 'public') {
    form = await readForm(c, deps.bodyLimitBytes);
    if (!tokensEqual(form.get('_csrf') ?? undefined, csrf)) {
      return {
        ok: false,
        status: 403,
        view,
        reason:
          'This form has expired or did not come from this dashboard; nothing was changed. Go back, reload that page and try again.',
      };
    }
  }
  if (principal && guard.role !== 'anyone') {
    try {
      await refuseBelow(c, deps, principal, { role: guard.role, action: guard.action }, targetOf(c));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return { ok: false, status: 403, view, reason: refusal(guard, principal, access) };
    }
  }
  if ((access === 'page' || access === 'login') && !fragment && c.req.method === 'GET') view.flash = takeFlash(c);
  return { ok: true, view, form, session };
}

/**
 * Why a signed-in key was refused. Only a refused action says "Nothing was changed": someone who merely opened a page
 * tried to change nothing, and telling them otherwise reads as if something had been attempted on their behalf.
 */
function refusal(guard: RouteGuard, principal: { name: string; role: Role }, access: Access): string {
  const why = `This needs the ${guard.role} role; you signed in with ${principal.name}, a ${principal.role} key.`;
  if (access === 'action') return `${why} Nothing was changed.`;
  return `${why} Sign in with a key of the ${guard.role} role to open this page.`;
}

/** The audit target of a refused dashboard action: what its path names (`job:42`, `execution:7`, `lane:short`). */
function targetOf(c: Context): string {
  const id = c.req.param('id');
  const lane = c.req.param('lane');
  if (id && c.req.path.startsWith('/jobs/')) return `job:${id}`;
  if (id && c.req.path.startsWith('/executions/')) return `execution:${id}`;
  if (lane) return `lane:${lane}`;
  return c.req.path.slice(0, 200);
}
