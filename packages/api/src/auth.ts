/**
 * @module auth — who a request acts as, and whether it may.
 *
 * `authenticate` resolves `Authorization: Bearer <key>` to a principal (the key's name and role); keys are compared as
 * SHA-256 digests with timingSafeEqual, so neither a key's content nor its length leaks through timing. Every route
 * declares the role it needs where it is defined, with `needs(role, action)` among its middleware: a marker the one
 * `authorize` check reads from the matched routes before anything else runs. A route that declares nothing needs
 * `admin` (fail closed), and test/api/roles.test.ts fails for it. A refusal is a 403 naming the role needed, and,
 * for a change, an audit row. Keys are never logged; their names are.
 */
import { roleAllows, type Actor, type AuditAction, type CommandDeps, type Role } from '@jobs/core';
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { ApiDeps, ApiEnv } from './deps';
import { ApiError } from './errors';
import type { AuthLimiter } from './auth-limit';
import { apiKeyList, keyMatcher, type ApiKey, type Principal } from './keys';
import { sourceAddress } from './source';

/** What a route needs: the least role, and for a change, the action its audit rows (and refusals) record. */
export interface RouteAccess {
  role: Role;
  action?: AuditAction;
}

const ACCESS = Symbol('route access');
type Marked = MiddlewareHandler & { [ACCESS]?: RouteAccess };

/**
 * Declares the role a route needs (and the audited action of a change); put it first in the route's middleware.
 * @example createRoute({ method: 'post', path: '/jobs/{id}/trigger', middleware: [needs('operate', 'job.trigger')] as const, ... })
 */
export function needs(role: Role, action?: AuditAction): MiddlewareHandler {
  const marker: Marked = (_c, next) => next();
  marker[ACCESS] = action ? { role, action } : { role };
  return marker;
}

/** The access a route handler (or middleware) declares, if it is a `needs` marker. */
export function accessOf(handler: unknown): RouteAccess | undefined {
  return (handler as Marked | undefined)?.[ACCESS];
}

/**
 * The access the matched route declares; `admin` for a route that declares none; null when no route matched
 * (only `use('*')` middleware did: the request is answered 404 or 405 further on).
 */
function requiredAccess(c: Context): RouteAccess | null {
  const routes = matchedRoutes(c).filter((r) => !(r.method === 'ALL' && r.path.endsWith('*')));
  if (routes.length === 0) return null;
  for (const r of routes) {
    const access = accessOf(r.handler);
    if (access) return access;
  }
  return { role: 'admin' };
}

/** The principal of a request with no keys configured (local development: loopback only, see host-guard.ts). */
export const OPEN_PRINCIPAL: Principal = { name: 'anonymous', role: 'admin' };

export function actorOf(c: Context<ApiEnv>, principal: Principal): Actor {
  return { keyName: principal.name, requestId: c.get('requestId') ?? null, source: sourceAddress(c) };
}

/** Refuses a principal below `access.role`: a 403 naming the role, and for a change an audit row of the attempt. */
export async function refuseBelow(
  c: Context<ApiEnv>,
  deps: Pick<ApiDeps, 'store' | 'logger'>,
  principal: Principal,
  access: RouteAccess,
  target: string,
): Promise<void> {
  if (roleAllows(principal.role, access.role)) return;
  deps.logger.warn({
    event: 'auth.forbidden',
    request_id: c.get('requestId'),
    key: principal.name,
    role: principal.role,
    needs: access.role,
    path: c.req.path.slice(0, 200),
  });
  if (access.action) {
    await deps.store.auditInsert({
      ...actorOf(c, principal),
      action: access.action,
      target,
      outcome: 'refused',
      changes: null,
    });
  }
  throw new ApiError(
    403,
    'forbidden',
    `this needs the ${access.role} role; key ${principal.name} has ${principal.role}`,
  );
}

/** The audit target of a refused API request: the kind and id in its path (`job:42`), or the path itself. */
function targetOf(path: string): string {
  const m = /\/(jobs|executions|lanes)\/([^/]+)/.exec(path);
  if (!m) return path.slice(0, 200);
  const kind = m[1] === 'jobs' ? 'job' : m[1] === 'executions' ? 'execution' : 'lane';
  return `${kind}:${m[2]!.slice(0, 100)}`;
}

/**
 * Authenticates and authorizes every /api/v1 request, and gives the handlers commands that audit under the key's
 * name (`c.var.commands`). `extra` keys are accepted besides API_KEYS (METRICS_TOKEN on GET /metrics). With a
 * `limiter`, a source address that presented too many wrong keys is answered 429 until its window closes.
 * @example v1.use('*', apiAuth(deps, commands, [], limiter))
 */
export function apiAuth(
  deps: ApiDeps,
  commands: CommandDeps,
  extra: readonly ApiKey[] = [],
  limiter: AuthLimiter | null = null,
): MiddlewareHandler<ApiEnv> {
  const keys = [...apiKeyList(deps.apiKeys), ...extra];
  const match = keyMatcher(keys);
  const challenge = { 'WWW-Authenticate': 'Bearer realm="jobs"' };
  return async (c, next) => {
    let principal = OPEN_PRINCIPAL;
    if (keys.length > 0) {
      // Requests with no known address (none in practice: Node has the socket, Lambda the event) share one budget.
      const source = sourceAddress(c) ?? 'unknown';
      const waitMs = limiter?.retryAfterMs(source) ?? 0;
      if (waitMs > 0) {
        const seconds = Math.max(1, Math.ceil(waitMs / 1000));
        deps.logger.warn({ event: 'auth.limited', request_id: c.get('requestId'), source });
        throw new ApiError(
          429,
          'too_many_failed_authentications',
          `too many wrong API keys from your address; try again in ${seconds} seconds`,
          undefined,
          { 'Retry-After': String(seconds) },
        );
      }
      const header = c.req.header('authorization');
      const bearer = header ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
      if (!bearer) {
        // A header that is not a bearer token is a failed attempt too; no header at all guesses nothing.
        if (header !== undefined) limiter?.failed(source);
        throw new ApiError(
          401,
          'unauthorized',
          'missing API key: send `Authorization: Bearer <key>`',
          undefined,
          challenge,
        );
      }
      const key = match(bearer[1]!);
      if (!key) {
        limiter?.failed(source);
        throw new ApiError(401, 'unauthorized', 'invalid API key', undefined, challenge);
      }
      principal = { name: key.name, role: key.role };
    }
    c.set('principal', principal);
    const access = requiredAccess(c);
    if (access) await refuseBelow(c, deps, principal, access, targetOf(c.req.path));
    c.set('commands', { ...commands, actor: actorOf(c, principal) });
    await next();
  };
}
