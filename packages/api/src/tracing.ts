/**
 * @module tracing — a span per API request (its parent the caller's `traceparent` header, if sane), and child spans
 * for the work a route does (`inSpan`). Installed only when the deps carry a Tracing: without one no middleware runs.
 * Attributes are method, route pattern, status and ids; never bodies, headers or keys.
 */
import { isTraceparent, type SpanAttributes, type TraceSpan, type Tracing } from '@jobs/core';
import type { Context, MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { ApiEnv } from './deps';

export function requestSpans(tracing: Tracing): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const incoming = c.req.header('traceparent')?.trim().toLowerCase();
    const span = tracing.start(`HTTP ${c.req.method}`, {
      kind: 'server',
      parent: isTraceparent(incoming) ? incoming : null,
      attributes: { 'http.request.method': c.req.method },
    });
    c.set('span', span);
    let failed: string | null = null;
    try {
      await next();
    } catch (error) {
      failed = 'unhandled error';
      throw error;
    } finally {
      const route = routePath(c, -1);
      const status = c.res.status;
      if (route !== '*' && route !== '/*') span.updateName(`${c.req.method} ${route}`);
      span.setAttributes({
        'http.route': route,
        'http.response.status_code': status,
        'http.request_id': c.get('requestId') ?? '',
      });
      span.end(failed ?? (status >= 500 ? `status ${status}` : null));
    }
  };
}

/**
 * Runs `work` in a child span of the request's span (no span at all without tracing).
 * @example await inSpan(deps.tracing, c, 'trigger', { 'job.id': id }, (span) => triggerJob(..., { traceparent: span?.traceparent }))
 */
export async function inSpan<T>(
  tracing: Tracing | null | undefined,
  c: Context<ApiEnv>,
  name: string,
  attributes: SpanAttributes,
  work: (span: TraceSpan | null) => Promise<T>,
): Promise<T> {
  if (!tracing) return work(null);
  const span = tracing.start(name, { parent: c.get('span')?.traceparent ?? null, attributes });
  try {
    const result = await work(span);
    span.end();
    return result;
  } catch (error) {
    span.end(error instanceof Error ? error.name : 'error');
    throw error;
  }
}
