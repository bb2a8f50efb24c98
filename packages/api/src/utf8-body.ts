/**
 * @module utf8-body — a request body must be valid UTF-8: bytes that are not are refused with 400, never decoded
 * into U+FFFD and stored as something the caller did not send. The checked text is left in Hono's body cache, so
 * the JSON validator parses it without reading or decoding the body again.
 */
import type { MiddlewareHandler } from 'hono';
import { ApiError } from './errors';

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function utf8Body(): MiddlewareHandler {
  return async (c, next) => {
    const method = c.req.method;
    if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return next();
    const bytes = await c.req.arrayBuffer();
    let text: string;
    try {
      text = strict.decode(bytes);
    } catch {
      throw new ApiError(400, 'invalid_utf8', 'request body is not valid UTF-8');
    }
    const cache = c.req.bodyCache as Record<string, unknown>;
    delete cache.arrayBuffer;
    cache.text = Promise.resolve(text);
    await next();
  };
}
