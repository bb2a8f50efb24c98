/**
 * @module dashboard — the web dashboard, served by the same Hono app at `/`: server-rendered HTML (hono/jsx), one
 * stylesheet, one small script. Every route comes from DASHBOARD_ROUTES and goes through the gate, so a route cannot
 * be added without saying who may use it. Middleware is attached per route, never with `use('*')`, so nothing here
 * touches /api/v1.
 */
import type { CommandDeps } from '@jobs/core';
import type { Hono } from 'hono';
import { actorOf, toApiError, type ApiDeps, type ApiEnv } from '@jobs/api';
import { admit } from './gate';
import { renderError } from './render';
import { DASHBOARD_ROUTES } from './routes';
import { sessionKeys } from './session';
import type { View } from './view';

export { DASHBOARD_ROUTES } from './routes';

/** No inline script or style, no framing, forms post only here. */
const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
  Vary: 'Cookie, X-Dashboard-Fragment',
};

/**
 * Adds the dashboard's routes to `app` (the API's root app).
 * @example dashboardRoutes(root, deps, commands)
 */
export function dashboardRoutes(app: Hono<ApiEnv>, deps: ApiDeps, commands: CommandDeps): void {
  const keys = sessionKeys(deps.apiKeys);
  for (const route of DASHBOARD_ROUTES) {
    app.on(route.method, route.path, async (c) => {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value);
      let view: View | null = null;
      try {
        const admission = await admit(c, route, deps, keys);
        if (!admission.ok) {
          if (admission.status === 303) return c.redirect(admission.location, 303);
          const link = admission.status === 401 ? { href: '/login', label: 'Sign in' } : undefined;
          return renderError(c, admission.view, admission.status, admission.reason, link);
        }
        view = admission.view;
        // Changes made from this request are audited under the signed-in key's name.
        const actor = admission.view.principal ? actorOf(c, admission.view.principal) : undefined;
        return await route.handler({
          c,
          deps,
          commands: { ...commands, actor },
          view,
          form: admission.form,
          session: admission.session,
          keys,
        });
      } catch (error) {
        const fallbackView: View = view ?? {
          path: c.req.path,
          open: deps.apiKeys.length === 0,
          signedIn: false,
          principal: null,
          csrf: '',
          flash: null,
          now: deps.clock.now(),
          requestId: c.get('requestId'),
        };
        const known = toApiError(error);
        if (known) return renderError(c, fallbackView, known.status, known.message);
        const err = error instanceof Error ? error : new Error(String(error));
        // Name, message and stack only: never the request, whose body may hold a key.
        deps.logger.error({
          event: 'dashboard.unhandled_error',
          request_id: c.get('requestId'),
          method: c.req.method,
          path: c.req.path,
          err: { name: err.name, message: err.message, stack: err.stack },
        });
        return renderError(
          c,
          fallbackView,
          500,
          `Internal error (request id ${c.get('requestId')}); details are in the server log.`,
        );
      }
    });
  }
}
