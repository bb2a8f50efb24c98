/**
 * @module source — the client's address, from what the platform itself saw, never from a request header.
 *
 * On AWS, API Gateway puts the caller's address in the Lambda event (`requestContext.http.sourceIp`); the
 * X-Forwarded-For it forwards starts with whatever the client sent, so the header is never read. Locally (Node) it
 * is the socket's peer address. Neither present (app.request() in tests): null.
 */
import type { Context } from 'hono';

interface PlatformEnv {
  event?: { requestContext?: { http?: { sourceIp?: unknown } } };
  incoming?: { socket?: { remoteAddress?: unknown } };
}

export function sourceAddress(c: Context): string | null {
  const env = c.env as PlatformEnv | undefined;
  const address = env?.event?.requestContext?.http?.sourceIp ?? env?.incoming?.socket?.remoteAddress;
  return typeof address === 'string' && address.length > 0 && address.length <= 100 ? address : null;
}
