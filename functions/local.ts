/**
 * `npm start`: the whole system in one process against local PostgreSQL and Redis: migrations, the REST API on
 * HTTP_PORT, the scheduler loop and a local worker. SIGTERM or Ctrl-C stops the server, lets the worker finish within
 * SHUTDOWN_GRACE, stops the scheduler and closes the connections; the process then exits 0.
 */
import { createApp } from '@jobs/api';
import { dashboardRoutes } from '@jobs/dashboard';
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { apiDeps } from './api';
import { createContext } from './context';
import { exitOnStartError, onShutdownSignal } from './process';
import { startSchedulerLoop } from './scheduler-loop';
import { startWorker } from './worker-setup';

const HOST = '127.0.0.1';
/** In-flight requests get this long to finish at shutdown before their connections are cut. */
const SERVER_CLOSE_MS = 5000;

async function main() {
  const ctx = await createContext({ migrate: true });
  const { config, logger } = ctx;
  if (config.apiKeys.length === 0) {
    logger.warn(
      { event: 'api.open' },
      'API_KEYS is not set: the API accepts every request WITHOUT AUTHENTICATION. Set API_KEYS=key1,key2 for anything but local development.',
    );
  }
  const app = createApp(apiDeps(ctx), [dashboardRoutes]);
  const loop = startSchedulerLoop(ctx);
  const worker = await startWorker(ctx, { kind: 'local' });

  const server = serve({ fetch: app.fetch, port: config.httpPort, hostname: HOST }, (info: AddressInfo) => {
    const url = `http://${HOST}:${info.port}`;
    logger.info({ event: 'api.listening', url, port: info.port }, `listening on ${url}`);
  });
  server.on('error', (error: Error) => {
    process.stderr.write(`cannot serve the API on ${HOST}:${config.httpPort}: ${error.message} (set HTTP_PORT to a free port)\n`);
    process.exit(1);
  });

  onShutdownSignal(async (signal) => {
    logger.info({ event: 'local.shutdown', signal });
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    if ('closeIdleConnections' in server) server.closeIdleConnections();
    const cut = setTimeout(() => 'closeAllConnections' in server && server.closeAllConnections(), SERVER_CLOSE_MS);
    await closed;
    clearTimeout(cut);
    await worker.stop();
    await loop.stop();
    logger.info({ event: 'local.stopped' });
    await ctx.close();
  });
}

main().catch(exitOnStartError);
