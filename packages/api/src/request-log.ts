/**
 * @module request-log — one structured line per request (method, path, status, duration_ms, request_id), and the
 * request id: a sane incoming `X-Request-Id` is kept, otherwise one is generated; either way it is echoed back.
 * Headers are never logged (Authorization carries the API key).
 */
import { clip, type Logger } from '@jobs/core';
import type { MiddlewareHandler } from 'hono';
import { randomUUID } from 'node:crypto';
import type { ApiEnv } from './deps';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,200}$/;

export function requestLog(logger: Logger): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const started = performance.now();
    const incoming = c.req.header('x-request-id');
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    c.set('requestId', requestId);
    c.header('X-Request-Id', requestId);
    await next();
    if (!c.res.headers.has('X-Request-Id')) c.res.headers.set('X-Request-Id', requestId);
    const status = c.res.status;
    const line = {
      event: 'http.request',
      method: c.req.method,
      path: clip(c.req.path),
      status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      request_id: requestId,
      // The name of the key the request used (never the key), once the auth middleware knows it.
      ...(c.get('principal') ? { key: c.get('principal').name } : {}),
    };
    if (status >= 500) logger.error(line);
    else logger.info(line);
  };
}
