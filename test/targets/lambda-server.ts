/**
 * A local HTTP server that answers Lambda Invoke (REST-JSON: `POST /2015-03-31/functions/{name}/invocations`,
 * `?Qualifier=`, `X-Amz-Invocation-Type`), so the real @aws-sdk/client-lambda can be pointed at it (LAMBDA_ENDPOINT).
 * Functions are scripted by name: return a result, a function error, or an invoke error (throttling, not found).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

interface InvokeCall {
  functionName: string;
  qualifier: string | null;
  invocationType: string | undefined;
  headers: IncomingHttpHeaders;
  event: string;
}

type FakeAnswer =
  | { result: unknown }
  | { functionError: string; errorMessage: string }
  | { status: number; type: string; message: string; retryAfter?: string };

export interface LambdaServer {
  url: string;
  calls: InvokeCall[];
  /** How a function answers its n-th call (0-based); unknown functions are a 404 ResourceNotFoundException. */
  functions: Record<string, (call: InvokeCall, n: number) => FakeAnswer>;
  close(): Promise<void>;
}

export async function startLambdaServer(): Promise<LambdaServer> {
  const state: Pick<LambdaServer, 'calls' | 'functions'> = { calls: [], functions: {} };
  const counts = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://x');
      const match = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(url.pathname);
      const error = (status: number, type: string, message: string, extra: Record<string, string> = {}) => {
        res.writeHead(status, {
          'content-type': 'application/json',
          'x-amzn-errortype': type,
          'x-amzn-requestid': randomUUID(),
          ...extra,
        });
        res.end(JSON.stringify({ Type: 'User', message }));
      };
      if (req.method !== 'POST' || !match)
        return error(400, 'InvalidRequestContentException', `unexpected ${req.method} ${url.pathname}`);
      const call: InvokeCall = {
        functionName: decodeURIComponent(match[1]!),
        qualifier: url.searchParams.get('Qualifier'),
        invocationType: req.headers['x-amz-invocation-type'] as string | undefined,
        headers: req.headers,
        event: Buffer.concat(chunks).toString('utf8'),
      };
      state.calls.push(call);
      const script = state.functions[call.functionName];
      if (!script) return error(404, 'ResourceNotFoundException', `Function not found: ${call.functionName}`);
      const n = counts.get(call.functionName) ?? 0;
      counts.set(call.functionName, n + 1);
      const answer = script(call, n);
      const version = {
        'x-amz-executed-version': call.qualifier && /^\d+$/.test(call.qualifier) ? call.qualifier : '$LATEST',
        'x-amzn-requestid': randomUUID(),
      };
      if ('status' in answer)
        return error(
          answer.status,
          answer.type,
          answer.message,
          answer.retryAfter ? { 'retry-after': answer.retryAfter } : {},
        );
      if ('functionError' in answer) {
        res.writeHead(200, {
          'content-type': 'application/json',
          'x-amz-function-error': answer.functionError,
          ...version,
        });
        res.end(JSON.stringify({ errorType: 'Error', errorMessage: answer.errorMessage }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', ...version });
      res.end(JSON.stringify(answer.result));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
