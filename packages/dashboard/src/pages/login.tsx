/**
 * @module dashboard/pages/login — sign in with an API key (the session cookie holds an HMAC, never the key), sign out.
 * The key is never echoed back, put in a URL or logged. A refused key redirects back to the form with a one-shot
 * notice (Post/Redirect/Get), so a reload never posts the key again.
 */
import type { FC } from 'hono/jsx';
import { clearCookie, writeCookie } from '../cookies';
import { setFlash } from '../flash';
import { renderPage } from '../render';
import { matchApiKey, mintSession, sessionKeys } from '../session';
import { CsrfField } from '../ui/components';
import { localPath, type DashRequest, type View } from '../view';

const MAX_KEY_LENGTH = 4096;

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
  const key = r.form.get('key') ?? '';
  const index = key.length > 0 && key.length <= MAX_KEY_LENGTH ? matchApiKey(r.deps.apiKeys, key) : -1;
  if (index < 0) {
    r.deps.logger.warn({ event: 'dashboard.login_failed', request_id: r.view.requestId });
    setFlash(r.c, key.length === 0 ? 'login-empty' : 'login-failed');
    return r.c.redirect(loginPath(next), 303);
  }
  writeCookie(r.c, 'session', mintSession(sessionKeys(r.deps.apiKeys), index, r.view.now));
  r.deps.logger.info({ event: 'dashboard.login', request_id: r.view.requestId });
  return r.c.redirect(next, 303);
}

export async function logout(r: DashRequest): Promise<Response> {
  clearCookie(r.c, 'session');
  clearCookie(r.c, 'draft');
  setFlash(r.c, 'signed-out');
  return r.c.redirect(r.view.open ? '/' : '/login', 303);
}
