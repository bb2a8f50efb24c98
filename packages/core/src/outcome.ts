/** @module outcome — turns a finished run into the outcome to record: succeeded, failed (with its retry delay) or dead. */
import type { Outcome, RunResult, StartedExecution } from './ports';
import { hasRetriesLeft, retryDelayMs } from './retry';

export function toOutcome(
  execution: StartedExecution,
  result: RunResult,
  context: { durationMs: number; workerId: string; random: () => number },
): Outcome {
  const retry = !result.ok && hasRetriesLeft(execution.attempt, execution.maxRetries);
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
    error: result.ok ? null : result.error ?? 'failed',
    durationMs: context.durationMs,
    retryDelayMs: retry ? retryDelayMs(execution.backoff, execution.attempt, context.random) : null,
    workerId: context.workerId,
    jobVersion: execution.jobVersion,
  };
}
