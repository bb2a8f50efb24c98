/**
 * @module lambda — the Lambda target adapter: a `RequestResponse` Invoke with the execution's payload as the event.
 *
 * Outcome rules: a clean invocation succeeds with the function's response as output (capped); a `FunctionError`
 * (the function threw or timed out) fails and is retried by the job's policy; an invoke error is retried when AWS
 * says it may pass (throttling, 5xx, a network error) and final otherwise (no such function, access denied, a
 * payload refused). The client is built once per process, with retries left to the job's policy.
 */
import { InvokeCommand, LambdaClient, type InvokeCommandOutput } from '@aws-sdk/client-lambda';
import type { LambdaTarget, RunResult, StartedExecution } from '@jobs/core';
import { CappedOutput, DEFAULT_OUTPUT_LIMIT } from './output';

export interface LambdaOptions {
  /** LAMBDA_ENDPOINT: another Invoke endpoint (a local fake, a VPC endpoint). */
  endpoint?: string | null;
  region?: string;
  /** Default: a client built from `endpoint` and `region` (credentials from the SDK's default chain). */
  client?: LambdaClient;
  outputLimit?: number;
}

function lambdaClient(options: { endpoint?: string | null; region?: string } = {}): LambdaClient {
  // One attempt per Invoke: the job's retry policy decides about retries (and sees every one of them).
  return new LambdaClient({
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.region ? { region: options.region } : {}),
    maxAttempts: 1,
  });
}

export function createLambdaTarget(options: LambdaOptions = {}) {
  let client = options.client ?? null;
  const limit = options.outputLimit ?? DEFAULT_OUTPUT_LIMIT;

  return async function runLambda(
    target: LambdaTarget,
    execution: StartedExecution,
    signal: AbortSignal,
  ): Promise<RunResult> {
    client ??= lambdaClient(options);
    const name = `${target.function}${target.qualifier ? `:${target.qualifier}` : ''}`;
    let response: InvokeCommandOutput;
    try {
      response = await client.send(
        new InvokeCommand({
          FunctionName: target.function,
          Qualifier: target.qualifier ?? undefined,
          InvocationType: 'RequestResponse',
          Payload: Buffer.from(JSON.stringify(execution.payload ?? null)),
        }),
        { abortSignal: signal },
      );
    } catch (error) {
      if (signal.aborted) return { ok: false, exitCode: null, output: '', error: `aborted (${String(signal.reason)})` };
      return invokeFailed(name, error);
    }
    const output = new CappedOutput(limit);
    output.write(
      `invoked ${name} (version ${response.ExecutedVersion ?? 'unknown'}): status ${response.StatusCode ?? 'unknown'}\n`,
    );
    if (response.Payload) output.write(Buffer.from(response.Payload));
    const text = output.toString();
    if (response.FunctionError) {
      return {
        ok: false,
        exitCode: null,
        output: text,
        error: `${name} failed: FunctionError ${response.FunctionError}`,
      };
    }
    return { ok: true, exitCode: null, output: text, error: null };
  };
}

function invokeFailed(name: string, error: unknown): RunResult {
  const e = error as {
    name?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
    $retryable?: unknown;
    retryAfterSeconds?: string;
  };
  const status = e.$metadata?.httpStatusCode;
  const throttled = status === 429 || e.name === 'TooManyRequestsException' || e.name === 'ThrottlingException';
  // No HTTP status: the request never got an answer (connection refused, reset, DNS): worth another attempt.
  const retryable = throttled || status === undefined || status >= 500;
  const after = Number(e.retryAfterSeconds);
  return {
    ok: false,
    exitCode: null,
    output: '',
    error: `invoke ${name} failed: ${e.name ?? 'Error'}${status ? ` (HTTP ${status})` : ''}: ${e.message ?? String(error)}`,
    final: !retryable,
    retryAfterMs: throttled && Number.isFinite(after) && after > 0 ? after * 1000 : null,
  };
}
