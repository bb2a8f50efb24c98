/**
 * A local HTTP server that answers EventBridge PutEvents (JSON 1.1 protocol: POST with
 * `X-Amz-Target: AWSEvents.PutEvents`), so the real AWS SDK client can be pointed at it. It records every call and
 * can fail chosen entries the way EventBridge does (an ErrorCode in that entry's slot of the answer).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';

/** An entry as it arrives on the wire. */
export interface WireEntry {
  EventBusName?: string;
  Source?: string;
  DetailType?: string;
  Detail?: string;
  Time?: number;
  Resources?: string[];
}

interface PutEventsCall {
  target: string | undefined;
  headers: IncomingHttpHeaders;
  entries: WireEntry[];
}

type EntryFailure = { ErrorCode: string; ErrorMessage: string };

export interface PutEventsServer {
  url: string;
  calls: PutEventsCall[];
  /** Entries answered with an EventId, in arrival order. */
  delivered: WireEntry[];
  /** Return a failure to answer that entry with it; null accepts it. */
  failEntry: ((entry: WireEntry, call: number) => EntryFailure | null) | null;
  /** Holds answers back this long (a slow EventBridge). */
  delayMs: number;
  /** A client of the real SDK pointed at this server. */
  client(options?: { maxAttempts?: number }): EventBridgeClient;
  /** Environment that points an SDK client built without options (the handlers' default) at this server. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

export async function startPutEventsServer(): Promise<PutEventsServer> {
  const state: Omit<PutEventsServer, 'url' | 'client' | 'env' | 'close'> = {
    calls: [],
    delivered: [],
    failEntry: null,
    delayMs: 0,
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const target = req.headers['x-amz-target'] as string | undefined;
      if (req.method !== 'POST' || target !== 'AWSEvents.PutEvents') {
        res.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify({ __type: 'UnknownOperationException', message: `unexpected ${req.method} ${target}` }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { Entries: WireEntry[] };
      const callIndex = state.calls.length;
      state.calls.push({ target, headers: req.headers, entries: body.Entries });
      if (state.delayMs > 0) await new Promise((r) => setTimeout(r, state.delayMs));
      let failed = 0;
      const answers = body.Entries.map((entry) => {
        const failure = state.failEntry?.(entry, callIndex) ?? null;
        if (failure) {
          failed++;
          return failure;
        }
        state.delivered.push(entry);
        return { EventId: randomUUID() };
      });
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() });
      res.end(JSON.stringify({ FailedEntryCount: failed, Entries: answers }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(state, {
    url,
    client: (options: { maxAttempts?: number } = {}) =>
      new EventBridgeClient({
        endpoint: url,
        region: 'us-east-1',
        credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
        maxAttempts: options.maxAttempts ?? 1,
      }),
    env: () => ({
      AWS_ENDPOINT_URL_EVENTBRIDGE: url,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'x',
      AWS_SECRET_ACCESS_KEY: 'y',
    }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/** A URL on which nothing listens (a port that was just bound and released). */
export async function deadEndpoint(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
