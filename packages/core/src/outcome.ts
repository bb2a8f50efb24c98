/**
 * @module outcome — turns a finished run into the outcome to record: succeeded, failed (with its retry delay) or dead.
 * The runner classifies (a final failure, a Retry-After); the retry policy here decides.
 */
import type { Outcome, RunResult, StartedExecution } from './ports';
import { hasRetriesLeft, retryDelayMs } from './retry';
import type { Backoff } from './types';

export function toOutcome(
  execution: StartedExecution,
  result: RunResult,
  context: { durationMs: number; workerId: string; random: () => number },
): Outcome {
  const retry = !result.ok && !result.final && hasRetriesLeft(execution.attempt, execution.maxRetries);
  return {
    id: execution.id,
    token: execution.token,
    jobId: execution.jobId,
    attempt: execution.attempt,
    lane: execution.lane,
    priority: execution.priority,
    status: result.ok ? 'succeeded' : retry ? 'failed' : 'dead',
    exitCode: result.exitCode,
    output: result.output,
    error: result.ok ? null : (result.error ?? 'failed'),
    durationMs: context.durationMs,
    retryDelayMs: retry
      ? delayBeforeRetry(execution.backoff, execution.attempt, result.retryAfterMs ?? null, context.random)
      : null,
    workerId: context.workerId,
    jobVersion: execution.jobVersion,
  };
}

/**
 * The backoff delay, or the target's Retry-After when that is later, capped at the backoff maximum (a target cannot
 * park a job for longer than its own policy allows).
 * @example delayBeforeRetry({ baseMs: 0, factor: 2, maxMs: 60000, jitter: 'none' }, 1, 3000) // 3000
 */
export function delayBeforeRetry(
  backoff: Backoff,
  attempt: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number {
  const delay = retryDelayMs(backoff, attempt, random);
  if (retryAfterMs === null || !(retryAfterMs > delay)) return delay;
  return Math.max(delay, Math.min(Math.ceil(retryAfterMs), backoff.maxMs));
}
