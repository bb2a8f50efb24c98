/**
 * @module channels/post-json — a JSON POST to a webhook or Slack URL through the address guard's agent (the same
 * SSRF rule and HTTP_TARGET_ALLOW as HTTP targets), with a time bound. Errors name the URL's origin only: its path and
 * query may carry tokens.
 */
import { type AddressPolicy, type SendResult } from '@jobs/core';
import type { Agent } from 'undici';
import { ADDRESS_REFUSED } from '../http-guard';

export interface PostJsonOptions {
  agent: Agent;
  policy: AddressPolicy;
  timeoutMs: number;
}

export async function postJson(
  options: PostJsonOptions,
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<SendResult> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { ok: false, error: 'the channel URL is not a URL', retryable: false };
  }
  const literal = options.policy.refuseLiteralHost(u);
  if (literal) return { ok: false, error: `refused: ${literal}`, retryable: false };
  try {
    const res = await options.agent.request({
      origin: u.origin,
      path: `${u.pathname}${u.search}`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'jobs-scheduler/0.1', ...headers },
      body,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    // Only the status matters; the body is drained so the connection can be reused.
    await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true, error: null, retryable: false };
    const retryable = res.statusCode === 408 || res.statusCode === 429 || res.statusCode >= 500;
    return { ok: false, error: `${u.origin} answered HTTP ${res.statusCode}`, retryable };
  } catch (error) {
    const e = error as { code?: string; message?: string };
    if (e.code === ADDRESS_REFUSED) return { ok: false, error: `refused: ${e.message}`, retryable: false };
    return { ok: false, error: `POST ${u.origin}: ${e.code ?? 'failed'}`, retryable: true };
  }
}
