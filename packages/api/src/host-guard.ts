/**
 * @module host-guard — who may talk to this API at all, before authentication: the DNS-rebinding and cross-site
 * defences a local, open API needs, applied to the REST API and the dashboard alike.
 *
 * - Host: the request's host (its URL and, when sent, its Host header) must be a loopback name or address
 *   (`localhost`, `*.localhost`, 127.0.0.0/8, `[::1]`), or, with API keys configured, one of `allowedHosts` (`*`: any).
 *   A web page that rebinds its own name to 127.0.0.1 still sends its own name, so it is refused.
 * - Cross-site: a request that can change something (any method but GET, HEAD, OPTIONS) with `Sec-Fetch-Site:
 *   cross-site`, or an `Origin` whose host is not one this server answers to (or `null`), is refused: a form on
 *   another site cannot post to it.
 * Both answer 403 with the JSON error shape. `/healthz` is exempt (probes address servers by IP).
 */
import type { MiddlewareHandler } from 'hono';
import { clip } from '@jobs/core';
import { ApiError } from './errors';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A hostname as the URL standard normalises it (lowercase, IPv4 forms resolved, IPv6 in brackets), or null. */
function hostnameOf(hostAndPort: string): string | null {
  try {
    return new URL(`http://${hostAndPort}`).hostname.replace(/\.$/, '');
  } catch {
    return null;
  }
}

function isLoopback(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname.endsWith('.localhost') ||
    hostname === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname) ||
    hostname === '[::ffff:7f00:1]'
  );
}

/**
 * @example app.use('*', hostGuard({ keyed: false, allowedHosts: [] }))   // open mode: loopback only
 */
export function hostGuard(options: { keyed: boolean; allowedHosts: readonly string[] }): MiddlewareHandler {
  const listed = new Set(options.allowedHosts.map((h) => h.toLowerCase().replace(/\.$/, '')));
  const anyHost = options.keyed && listed.has('*');
  const allowed = (hostname: string | null) =>
    hostname !== null && (isLoopback(hostname) || (options.keyed && (anyHost || listed.has(hostname))));
  const refuseHost = (shown: string) =>
    new ApiError(
      403,
      'forbidden_host',
      options.keyed
        ? `host ${JSON.stringify(clip(shown))} is not served here: add it to ALLOWED_HOSTS`
        : `host ${JSON.stringify(clip(shown))} is not served here: without API_KEYS the API answers only loopback names (localhost, 127.0.0.1, [::1])`,
    );
  return async (c, next) => {
    if (c.req.path === '/healthz') return next();
    const urlHost = new URL(c.req.url).hostname.replace(/\.$/, '');
    if (!allowed(urlHost)) throw refuseHost(urlHost);
    const header = c.req.header('host');
    if (header !== undefined && !allowed(hostnameOf(header))) throw refuseHost(header);
    if (!SAFE_METHODS.has(c.req.method)) {
      if (c.req.header('sec-fetch-site') === 'cross-site') {
        throw new ApiError(
          403,
          'cross_site_request',
          'a request from another site cannot change anything here (Sec-Fetch-Site: cross-site)',
        );
      }
      const origin = c.req.header('origin');
      if (origin !== undefined) {
        let originHost: string | null = null;
        try {
          originHost = origin === 'null' ? null : new URL(origin).hostname.replace(/\.$/, '');
        } catch {
          originHost = null;
        }
        if (!allowed(originHost)) {
          throw new ApiError(
            403,
            'cross_site_request',
            `a request from another site cannot change anything here (Origin ${JSON.stringify(clip(origin))})`,
          );
        }
      }
    }
    await next();
  };
}
