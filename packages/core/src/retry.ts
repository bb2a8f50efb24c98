/** @module retry — exponential backoff with full jitter and a cap, and the "any attempts left?" rule. */
import type { Backoff } from './types';

export const DEFAULT_BACKOFF: Backoff = { baseMs: 1000, factor: 2, maxMs: 5 * 60_000, jitter: 'full' };

/**
 * Delay before retry number `retry` (1 for the first retry).
 * Ceiling = min(maxMs, baseMs * factor^(retry-1)); full jitter draws uniformly from [0, ceiling].
 * @example retryDelayMs({ baseMs: 1000, factor: 2, maxMs: 60000, jitter: 'none' }, 3) // 4000
 */
export function retryDelayMs(backoff: Backoff, retry: number, random: () => number = Math.random): number {
  const exponent = Math.max(0, retry - 1);
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * Math.pow(backoff.factor, exponent));
  const bounded = Number.isFinite(ceiling) ? ceiling : backoff.maxMs;
  return backoff.jitter === 'full' ? Math.floor(random() * (bounded + 1)) : Math.floor(bounded);
}

/** `maxRetries` counts retries after the first attempt, so attempt N may be retried while N <= maxRetries. */
export function hasRetriesLeft(attempt: number, maxRetries: number): boolean {
  return attempt <= maxRetries;
}
