/**
 * @module runner — the worker's Runner: one port, four target adapters. A job runs its shell command, a TypeScript
 * handler registered by name, an HTTP request (http.ts) or a Lambda invocation (lambda.ts). Each adapter returns the
 * outcome with its output and classification (final, Retry-After); the core's retry policy decides what follows.
 */
import type { Cancellation, LiveOutputSink, Runner, RunResult, StartedExecution, Tracing } from '@jobs/core';
import { createHttpTarget, type HttpOptions } from './http';
import { createLambdaTarget, type LambdaOptions } from './lambda';
import { CappedOutput, DEFAULT_OUTPUT_LIMIT } from './output';
import { runShell, type ShellOptions } from './shell';
import { attemptSecretNames, maskingSink, maskResult, resolveAttempt, type SecretSource } from './secrets';
import { traceAttempts } from './traced';

interface HandlerContext {
  jobId: string;
  executionId: string;
  attempt: number;
  scheduledFor: Date;
  payload: unknown;
  /** W3C trace context of the attempt's span when tracing is on (pass it on to calls the handler makes). */
  traceparent: string | null;
  /** Aborted on timeout, cancel or shutdown: stop promptly. */
  signal: AbortSignal;
  /** Captured into the execution's output (capped like a command's). */
  log: (line: string) => void;
}

/** A handler's return value (JSON-serialised) becomes the output; a throw is a failure with its message. */
export type Handler = (context: HandlerContext) => unknown | Promise<unknown>;

export interface RunnerOptions extends ShellOptions {
  handlers?: Record<string, Handler>;
  /** False: command jobs fail without running (COMMAND_JOBS=off, a deployment that runs handlers only). */
  commands?: boolean;
  /** HTTP targets: the address policy (default: public addresses only) and the signing secrets (default: none). */
  http?: Partial<HttpOptions>;
  /** Lambda targets: the endpoint or client (default: the SDK's defaults, built on first use). */
  lambda?: LambdaOptions;
  /** A span per attempt (and its TRACEPARENT); absent: tracing off, and attempts run exactly as without it. */
  tracing?: Tracing | null;
  /** Where secret references are resolved (SECRETS_KEY); absent: an attempt that references one fails. */
  secrets?: SecretSource | null;
}

const COMMANDS_DISABLED = 'command jobs are disabled on this worker (COMMAND_JOBS=off)';

/**
 * @example
 *   const runner = createRunner({ handlers: { 'send-report': async ({ payload }) => send(payload) } });
 */
export function createRunner(options: RunnerOptions = {}): Runner & { handlers: Map<string, Handler> } {
  const handlers = new Map(Object.entries(options.handlers ?? {}));
  const limit = options.outputLimit ?? DEFAULT_OUTPUT_LIMIT;
  const runHttp = createHttpTarget({ outputLimit: limit, tracing: options.tracing ?? null, ...options.http });
  const runLambda = createLambdaTarget({ outputLimit: limit, ...options.lambda });
  const live = options.liveOutput ?? null;
  const runTarget = async (
    execution: StartedExecution,
    cancel: Cancellation,
    liveOutput: LiveOutputSink | null,
  ): Promise<RunResult> => {
    if (execution.http) return runHttp(execution.http, execution, cancel);
    if (execution.lambda) return runLambda(execution.lambda, execution, cancel.signal);
    if (execution.handler) {
      const handler = handlers.get(execution.handler);
      if (!handler) {
        return {
          ok: false,
          exitCode: null,
          output: '',
          error: `no handler named ${JSON.stringify(execution.handler)} is registered in this worker`,
        };
      }
      return runHandler(handler, execution, cancel, limit, liveOutput);
    }
    if (execution.command) {
      if (options.commands === false) return { ok: false, exitCode: null, output: '', error: COMMANDS_DISABLED };
      return runShell(execution.command, execution, cancel.signal, { ...options, liveOutput });
    }
    return {
      ok: false,
      exitCode: null,
      output: '',
      error: 'job has no target (command, handler, http or lambda)',
      final: true,
    };
  };
  const runner = {
    handlers,
    async run(execution: StartedExecution, cancel: Cancellation): Promise<RunResult> {
      const names = attemptSecretNames(execution);
      if (names.length === 0) return runTarget(execution, cancel, live);
      const resolved = await resolveAttempt(execution, names, options.secrets ?? null);
      if (!('values' in resolved)) return resolved;
      const result = await runTarget(resolved.execution, cancel, maskingSink(live, resolved.values));
      return maskResult(result, resolved.values);
    },
  };
  return options.tracing ? { handlers, run: traceAttempts(runner, options.tracing).run } : runner;
}

async function runHandler(
  handler: Handler,
  execution: StartedExecution,
  cancel: Cancellation,
  limit: number,
  live: LiveOutputSink | null,
): Promise<RunResult> {
  const output = new CappedOutput(limit, live ? { onChunk: (chunk) => live.append(execution.id, chunk) } : {});
  try {
    const value = await handler({
      jobId: execution.jobId,
      executionId: execution.id,
      attempt: execution.attempt,
      scheduledFor: execution.scheduledFor,
      payload: execution.payload,
      traceparent: execution.traceparent ?? null,
      // A getter: the signal is only built for handlers that look at it.
      get signal() {
        return cancel.signal;
      },
      log: (line) => output.write(`${line}\n`),
    });
    if (value !== undefined) output.write(typeof value === 'string' ? value : JSON.stringify(value));
    return { ok: true, exitCode: null, output: output.toString(), error: null };
  } catch (error) {
    return {
      ok: false,
      exitCode: null,
      output: output.toString(),
      error: error instanceof Error ? error.message : String(error),
    };
  } finally {
    live?.end(execution.id);
  }
}

/** Handlers every worker has: `noop` (for measuring the engine) and `sleep` (payload `{ "ms": 100 }`). */
export const BUILTIN_HANDLERS: Record<string, Handler> = {
  noop: () => undefined,
  sleep: ({ payload, signal }) =>
    new Promise<void>((resolve, reject) => {
      const ms = Math.max(0, Number((payload as { ms?: unknown } | null)?.ms ?? 0)) || 0;
      const timer = setTimeout(resolve, ms);
      signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          reject(new Error(`aborted: ${String(signal.reason)}`));
        },
        { once: true },
      );
    }),
};
