/**
 * @module traced — spans around attempts and their outbound calls, on the core's Tracing port. With tracing off
 * nothing here is called (createRunner returns the plain runner).
 *
 * An attempt's span has the execution's stored traceparent as parent (the triggering request; none for cron runs,
 * which start their own trace), and the attempt runs with its own span's traceparent: a command gets it as
 * TRACEPARENT, a handler as `traceparent`, and an HTTP target request's span (startTargetSpan) hangs below it.
 */
import type { Cancellation, Runner, RunResult, StartedExecution, Tracing } from '@jobs/core';

/** Identity of an attempt as span attributes: ids, attempt, lane and trigger, never payload or output. */
function attemptAttributes(execution: StartedExecution): Record<string, string | number> {
  return {
    'job.id': execution.jobId,
    'execution.id': execution.id,
    'execution.attempt': execution.attempt,
    'execution.lane': execution.lane,
    'execution.trigger': execution.trigger,
  };
}

/** @example const runner = traceAttempts(createRunner({ handlers }), tracing) */
export function traceAttempts(runner: Runner, tracing: Tracing): Runner {
  return {
    async run(execution: StartedExecution, cancel: Cancellation): Promise<RunResult> {
      const span = tracing.start('attempt', {
        kind: 'internal',
        parent: execution.traceparent ?? null,
        attributes: attemptAttributes(execution),
      });
      let result: RunResult | null = null;
      try {
        result = await runner.run({ ...execution, traceparent: span.traceparent }, cancel);
        return result;
      } finally {
        span.setAttributes({
          outcome: result === null ? 'error' : result.ok ? 'succeeded' : 'failed',
          ...(result?.exitCode !== null && result?.exitCode !== undefined
            ? { 'process.exit_code': result.exitCode }
            : {}),
        });
        // The status message names the failure's kind only: an error text may quote what the job printed.
        span.end(result?.ok ? null : 'attempt failed');
      }
    },
  };
}

export interface TargetSpan {
  /** Headers to send with the request (`traceparent`); empty when tracing is off. */
  headers: Record<string, string>;
  /** Ends the span with the response status, or the error that stopped the request. */
  end(result: { status?: number | null; error?: string | null }): void;
}

const NO_SPAN: TargetSpan = { headers: {}, end: () => undefined };

/**
 * A client span for one outbound request of an attempt (the HTTP target adapter's), child of the attempt's span.
 * Only the method and the host are recorded: a URL's path, query or user info may carry secrets.
 * @example
 *   const span = startTargetSpan(tracing, execution, { method: 'POST', url });
 *   const res = await fetch(url, { method: 'POST', headers: { ...headers, ...span.headers } });
 *   span.end({ status: res.status });
 */
export function startTargetSpan(
  tracing: Tracing | null | undefined,
  execution: StartedExecution,
  request: { method: string; url: string | URL },
): TargetSpan {
  if (!tracing) return NO_SPAN;
  const url = typeof request.url === 'string' ? new URL(request.url) : request.url;
  const span = tracing.start(`${request.method.toUpperCase()} ${url.host}`, {
    kind: 'client',
    parent: execution.traceparent ?? null,
    attributes: {
      ...attemptAttributes(execution),
      'http.request.method': request.method.toUpperCase(),
      'server.address': url.hostname,
    },
  });
  return {
    headers: { traceparent: span.traceparent },
    end({ status, error }) {
      if (status !== null && status !== undefined) span.setAttributes({ 'http.response.status_code': status });
      span.end(
        error ? 'request failed' : status !== null && status !== undefined && status >= 500 ? `status ${status}` : null,
      );
    },
  };
}
