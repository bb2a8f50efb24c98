/**
 * @module auth — `Authorization: Bearer <key>` against the configured API keys. Keys are compared as SHA-256
 * digests with timingSafeEqual, so neither a key's content nor its length leaks through response timing, and every
 * key is compared (no early exit). Keys are never logged.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { ApiEnv } from './deps';
import { ApiError } from './errors';

/** Who a request acts as, recorded in job versions (one actor until API keys get names). */
export const API_ACTOR = 'api';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * @example app.use('*', bearerAuth(['k1', 'k2']))  // an empty list lets every request through
 */
export function bearerAuth(keys: readonly string[]): MiddlewareHandler<ApiEnv> {
  const accepted = keys.map(digest);
  const challenge = { 'WWW-Authenticate': 'Bearer realm="jobs"' };
  return async (c, next) => {
    c.set('actor', API_ACTOR);
    if (accepted.length === 0) return next();
    const header = c.req.header('authorization');
    const match = header ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
    if (!match) {
      throw new ApiError(401, 'unauthorized', 'missing API key: send `Authorization: Bearer <key>`', undefined, challenge);
    }
    const given = digest(match[1]!);
    let ok = false;
    for (const key of accepted) ok = timingSafeEqual(given, key) || ok;
    if (!ok) throw new ApiError(401, 'unauthorized', 'invalid API key', undefined, challenge);
    await next();
  };
}
