/**
 * A local stand-in for the two AWS APIs the deploy's preflight calls (infra/preflight.ts), speaking their wire
 * protocols: Lambda's GetAccountSettings (REST-JSON, `GET /2016-08-19/account-settings`) and SSM's GetParameter
 * (JSON 1.1, `POST /` with `X-Amz-Target: AmazonSSM.GetParameter`). The real SDK clients reach it through the SDK's
 * own AWS_ENDPOINT_URL_LAMBDA and AWS_ENDPOINT_URL_SSM.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeAwsState {
  /** AccountLimit.ConcurrentExecutions. */
  concurrentExecutions: number;
  /** AccountLimit.UnreservedConcurrentExecutions (default: all of it). */
  unreservedConcurrentExecutions?: number;
  /** SSM parameters by name. */
  parameters: Record<string, string>;
  /** Requests seen, `METHOD path target`. */
  requests: string[];
}

export interface FakeAws {
  state: FakeAwsState;
  /** The environment that points the SDK (and the preflight's credentials) at this server. */
  env: Record<string, string>;
  close(): Promise<void>;
  /** Lets the process exit while the server still listens (the default fake of a test file). */
  unref(): FakeAws;
}

export async function startFakeAws(initial: Partial<FakeAwsState> = {}): Promise<FakeAws> {
  const state: FakeAwsState = { concurrentExecutions: 1000, parameters: {}, requests: [], ...initial };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      state.requests.push(`${req.method} ${req.url} ${target}`.trim());
      const json = (status: number, body: unknown, type = 'application/json') => {
        res.writeHead(status, { 'content-type': type });
        res.end(JSON.stringify(body));
      };
      if (req.method === 'GET' && req.url?.startsWith('/2016-08-19/account-settings')) {
        return json(200, {
          AccountLimit: {
            TotalCodeSize: 80_530_636_800,
            CodeSizeUnzipped: 262_144_000,
            CodeSizeZipped: 52_428_800,
            ConcurrentExecutions: state.concurrentExecutions,
            UnreservedConcurrentExecutions: state.unreservedConcurrentExecutions ?? state.concurrentExecutions,
          },
          AccountUsage: { TotalCodeSize: 0, FunctionCount: 0 },
        });
      }
      if (req.method === 'POST' && target === 'AmazonSSM.GetParameter') {
        const { Name } = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { Name?: string };
        const value = Name === undefined ? undefined : state.parameters[Name];
        if (value === undefined)
          return json(400, { __type: 'ParameterNotFound', message: `${Name}` }, 'application/x-amz-json-1.1');
        return json(
          200,
          { Parameter: { Name, Type: 'String', Value: value, Version: 1, DataType: 'text' } },
          'application/x-amz-json-1.1',
        );
      }
      json(400, { __type: 'UnknownOperationException', message: `no fake for ${req.method} ${req.url} ${target}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fake: FakeAws = {
    state,
    env: {
      AWS_ENDPOINT_URL_LAMBDA: url,
      AWS_ENDPOINT_URL_SSM: url,
      SST_AWS_REGION: 'us-east-1',
      SST_AWS_ACCESS_KEY_ID: 'AKIDFAKEPREFLIGHT',
      SST_AWS_SECRET_ACCESS_KEY: 'fake-secret',
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    unref() {
      server.unref();
      return fake;
    },
  };
  return fake;
}
