/**
 * A local HTTP receiver for HTTP-target tests: records every request (headers and raw body) and answers with what
 * the test scripts (`respond`), by default 200. Listens on `::` (dual stack), so 127.0.0.x and [::1] both reach it.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  port: number;
  /** http://127.0.0.1:<port><path> */
  url(path?: string, host?: string): string;
  requests: ReceivedRequest[];
  /** Answers request number `n` (0-based); return true when it wrote the response itself. Default: 200 "ok". */
  respond: (req: ReceivedRequest, res: ServerResponse, n: number) => void | boolean | Promise<void | boolean>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const state = {
    requests: [] as ReceivedRequest[],
    respond: (() => undefined) as Receiver['respond'],
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const received = {
        method: req.method!,
        path: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const n = state.requests.push(received) - 1;
      const handled = await state.respond(received, res, n);
      if (!handled && !res.headersSent) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '::', ipv6Only: false }, resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(state, {
    port,
    url: (path = '/hook', host = '127.0.0.1') => `http://${host}:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as Receiver;
}
