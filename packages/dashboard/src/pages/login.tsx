/**
 * @module dashboard/pages/login — sign in with an API key (the cookie holds a random session token, never the key;
 * the session is a row in PostgreSQL), sign out (the row is ended, so every copy of the cookie dies). The key is
 * never echoed back, put in a URL or logged. A refused key redirects back to the form with a one-shot notice
 * (Post/Redirect/Get), so a reload never posts the key again. Each source address may fail SIGN_IN_MAX_FAILURES times
 * a minute; after that every attempt is a 429 with Retry-After until the minute is over. Every attempt, refused by
 * the limit or not, is an audit row.
 */
import type { FC } from 'hono/jsx';
import { clearCookie, writeCookie } from '../cookies';
import { setFlash } from '../flash';
import { renderError, renderPage } from '../render';
import { actorOf, keyFingerprint, keyMatcher, sourceAddress } from '@jobs/api';
import { newSessionToken, SESSION_TTL_MS, tokenHash } from '../session';
import { CsrfField } from '../ui/components';
import { localPath, type DashRequest, type View } from '../view';

const MAX_KEY_LENGTH = 4096;
const SIGN_IN_MAX_FAILURES = 10;
const SIGN_IN_WINDOW_MS = 60_000;

/** Where to go after signing in: a local dashboard path, never back to /login. */
function nextPath(value: string | null | undefined): string {
  const path = localPath(value, '/');
  return path === '/login' || path.startsWith('/login?') ? '/' : path;
}

const LoginForm: FC<{ view: View; next: string; error?: string }> = ({ view, next, error }) => (
  <div class="login panel">
    <h1>Sign in</h1>
    <p class="subtitle">Use one of the API keys the scheduler is configured with (API_KEYS).</p>
    <form method="post" action="/login" class="stacked">
      <CsrfField view={view} />
      <input type="hidden" name="next" value={next} />
      <div class="field">
        <label for="key">API key</label>
        <input
          id="key"
          name="key"
          type="password"
          required
          autofocus
          autocomplete="current-password"
          spellcheck={false}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'key-error' : undefined}
        />
        {error && (
          <p class="field-error" id="key-error" role="alert">
            {error}
          </p>
        )}
      </div>
      <div>
        <button type="submit" class="btn btn-primary">
          Sign in
        </button>
      </div>
    </form>
  </div>
);

/** The sign-in page for `next`; the form's address keeps it. */
const loginPath = (next: string) => (next === '/' ? '/login' : `/login?next=${encodeURIComponent(next)}`);

export async function loginPage(r: DashRequest): Promise<Response> {
  const next = nextPath(r.c.req.query('next'));
  if (r.view.open || r.view.signedIn) return r.c.redirect(next, 303);
  // A refused key is shown beside the field, which keeps focus (autofocus) and is described by the message.
  const error = r.view.flash?.field === 'key' ? r.view.flash.text : undefined;
  if (error) r.view.flash = null;
  r.view.focusHeld = true;
  return renderPage(r.c, r.view, {
    title: error ? 'Error: sign in' : 'Sign in',
    bare: true,
    body: <LoginForm view={r.view} next={next} error={error} />,
  });
}

export async function loginSubmit(r: DashRequest): Promise<Response> {
  const next = nextPath(r.form.get('next'));
  if (r.view.open) return r.c.redirect(next, 303);
  // Requests with no known address (none in practice: Node has the socket, Lambda the event) share one budget.
  const source = sourceAddress(r.c) ?? 'unknown';
  const limit = { source, windowMs: SIGN_IN_WINDOW_MS };
  const { failures, resetsInMs } = await r.deps.store.signInFailures(limit);
  if (failures >= SIGN_IN_MAX_FAILURES) {
    const seconds = Math.max(1, Math.ceil(resetsInMs / 1000));
    r.deps.logger.warn({ event: 'dashboard.login_limited', request_id: r.view.requestId, source });
    // Refused unread, and audited like every other attempt: the trail shows a guessing run whole, not its first ten.
    await r.deps.store.auditInsert({
      ...actorOf(r.c, { name: '(unknown)', role: 'read' }),
      action: 'session.sign_in',
      target: 'session',
      outcome: 'refused',
      changes: null,
    });
    r.c.header('Retry-After', String(seconds));
    return renderError(
      r.c,
      r.view,
      429,
      `Too many failed sign-ins from your address. Try again in ${seconds} seconds.`,
      { href: '/login', label: 'Sign in' },
    );
  }
  const key = r.form.get('key') ?? '';
  const found = key.length > 0 && key.length <= MAX_KEY_LENGTH ? keyMatcher(r.keys.keys)(key) : null;
  const actor = (name: string) => actorOf(r.c, { name, role: 'read' });
  if (!found) {
    r.deps.logger.warn({ event: 'dashboard.login_failed', request_id: r.view.requestId, source });
    // The attempt is recorded under no key name: what was typed may be a key (of another system) or a password.
    await r.deps.store.signInFailed(limit, {
      ...actor('(unknown)'),
      action: 'session.sign_in',
      target: 'session',
      outcome: 'refused',
      changes: null,
    });
    setFlash(r.c, key.length === 0 ? 'login-empty' : 'login-failed');
    return r.c.redirect(loginPath(next), 303);
  }
  const { token, cookie } = newSessionToken();
  const hash = tokenHash(token);
  await r.deps.store.sessionInsert(
    {
      tokenHash: hash,
      keyName: found.name,
      keyFingerprint: keyFingerprint(found.key),
      source: sourceAddress(r.c),
      expiresAt: new Date(r.view.now.getTime() + SESSION_TTL_MS),
    },
    { ...actor(found.name), action: 'session.sign_in', target: sessionTarget(hash), outcome: 'ok', changes: null },
  );
  writeCookie(r.c, 'session', cookie);
  r.deps.logger.info({ event: 'dashboard.login', request_id: r.view.requestId, key: found.name });
  return r.c.redirect(next, 303);
}

/** A session as the audit trail and the sessions list name it: a prefix of its token's hash (useless as a cookie). */
export function sessionTarget(hash: Buffer): string {
  return `session:${hash.toString('hex').slice(0, 12)}`;
}

export async function logout(r: DashRequest): Promise<Response> {
  if (r.session) {
    const actor = actorOf(r.c, { name: r.session.key.name, role: r.session.key.role });
    await r.deps.store.sessionEnd(r.session.tokenHash, {
      ...actor,
      action: 'session.sign_out',
      target: sessionTarget(r.session.tokenHash),
      outcome: 'ok',
      changes: null,
    });
  }
  clearCookie(r.c, 'session');
  clearCookie(r.c, 'draft');
  setFlash(r.c, 'signed-out');
  return r.c.redirect(r.view.open ? '/' : '/login', 303);
}
