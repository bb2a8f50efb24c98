/**
 * @module dashboard/cookies — the dashboard's cookies (session, double-submit form token, one-shot flash, and the
 * job form's draft), all HttpOnly and SameSite=Strict. Over https they are Secure and carry the `__Host-` prefix,
 * which browsers only accept from a secure origin without a Domain attribute, so a sibling subdomain cannot plant
 * them. The draft (up to 4 KB) is sent to /jobs/new only, so it needs `__Secure-` (`__Host-` requires Path=/); it is
 * signed, so a planted one is refused anyway.
 */
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { SESSION_TTL_MS } from './session';

export type CookieKind = 'session' | 'form' | 'flash' | 'draft';

const BASE_NAMES: Record<CookieKind, string> = {
  session: 'jobs_session',
  form: 'jobs_form',
  flash: 'jobs_flash',
  draft: 'jobs_draft',
};
const MAX_AGE_S: Record<CookieKind, number> = {
  session: SESSION_TTL_MS / 1000,
  form: SESSION_TTL_MS / 1000,
  flash: 60,
  draft: 3600,
};
const PATHS: Partial<Record<CookieKind, string>> = { draft: '/jobs/new' };
const pathOf = (kind: CookieKind) => PATHS[kind] ?? '/';

/**
 * True when the browser reached us over https: directly, or through a proxy that says so (API Gateway and most load
 * balancers set X-Forwarded-Proto; hono/aws-lambda also builds an https:// URL). A client spoofing the header only
 * makes its own cookies Secure.
 */
function isHttps(c: Context): boolean {
  const forwarded = c.req.header('x-forwarded-proto');
  if (forwarded) return forwarded.split(',')[0]!.trim().toLowerCase() === 'https';
  return new URL(c.req.url).protocol === 'https:';
}

function cookieName(c: Context, kind: CookieKind): string {
  if (!isHttps(c)) return BASE_NAMES[kind];
  return `${pathOf(kind) === '/' ? '__Host-' : '__Secure-'}${BASE_NAMES[kind]}`;
}

export function readCookie(c: Context, kind: CookieKind): string | undefined {
  return getCookie(c, cookieName(c, kind));
}

/** Appends a Set-Cookie header to the response the handler is about to build (c.html, c.redirect). */
export function writeCookie(c: Context, kind: CookieKind, value: string, maxAgeSeconds = MAX_AGE_S[kind]): void {
  setCookie(c, cookieName(c, kind), value, {
    path: pathOf(kind),
    httpOnly: true,
    sameSite: 'Strict',
    secure: isHttps(c),
    maxAge: Math.floor(maxAgeSeconds),
  });
}

export function clearCookie(c: Context, kind: CookieKind): void {
  deleteCookie(c, cookieName(c, kind), { path: pathOf(kind), httpOnly: true, sameSite: 'Strict', secure: isHttps(c) });
}
