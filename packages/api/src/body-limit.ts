/**
 * @module body-limit — rejects request bodies over the limit with 413.
 * Hono's bodyLimit looks at `req.raw.body` first, which makes @hono/node-server build a full Web Request (streams,
 * an AbortSignal) for every request. A declared Content-Length is checked from the header alone, keeping the
 * server's light request and its fast body read; only a body without a length (chunked) is streamed through Hono's
 * middleware, which counts as it reads.
 */
import type { MiddlewareHandler } from 'hono';
import { bodyLimit as streamingBodyLimit } from 'hono/body-limit';

export function bodyLimit(maxSize: number, onError: () => never): MiddlewareHandler {
  const streaming = streamingBodyLimit({ maxSize, onError });
  return async (c, next) => {
    const method = c.req.method;
    if (method === 'GET' || method === 'HEAD') return next();
    const length = c.req.header('content-length');
    if (length !== undefined && c.req.header('transfer-encoding') === undefined) {
      if (Number(length) > maxSize) onError();
      return next();
    }
    return streaming(c, next);
  };
}
