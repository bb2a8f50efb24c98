/**
 * `npm start`: the whole system in one process against local PostgreSQL and Redis: migrations, the REST API on
 * HTTP_PORT, the scheduler loop and a local worker. SIGTERM or Ctrl-C stops the server, lets the worker finish within
 * SHUTDOWN_GRACE, stops the scheduler and closes the connections; the process then exits 0.
 * With neither DATABASE_URL nor REDIS_URL set, it first starts an embedded PostgreSQL (functions/embedded-postgres.ts)
 * and puts the queue on it, and stops that server last.
 */
import { createApp } from '@jobs/api';
import { dashboardRoutes } from '@jobs/dashboard';
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { apiDeps } from './api';
import { loadConfig } from './config';
import { createContext } from './context';
import { EmbeddedPostgresError, startEmbeddedPostgres, type EmbeddedServer } from './embedded-postgres';
import { createLogger } from './logger';
import { exitOnStartError, onShutdownSignal } from './process';
import { startSchedulerLoop } from './scheduler-loop';
import { startWorker } from './worker-setup';

const HOST = '127.0.0.1';
/** In-flight requests get this long to finish at shutdown before their connections are cut. */
const SERVER_CLOSE_MS = 5000;

async function main() {
  let config = loadConfig();
  const logger = createLogger({ level: config.logLevel });
  let embedded: EmbeddedServer | null = null;
  if (config.nothingConfigured && config.queueBackend === 'postgres') {
    embedded = await startEmbedded();
    config = { ...config, databaseUrl: embedded.url };
    logger.info(
      {
        event: 'embedded_postgres.started',
        data_dir: embedded.dataDir,
        port: embedded.port,
        created: embedded.created,
        queue: 'postgres',
      },
      `DATABASE_URL and REDIS_URL are not set: running an embedded PostgreSQL (data in ${embedded.dataDir}, port ${embedded.port}) ` +
        'with the queue on PostgreSQL. To use servers of your own, set DATABASE_URL=postgres://... (and REDIS_URL=redis://... for the Redis queue).',
    );
  }
  let ctx;
  try {
    ctx = await createContext({ config, logger, migrate: true });
  } catch (error) {
    await embedded?.stop().catch(() => undefined);
    throw error;
  }
  if (config.apiKeys.length === 0) {
    logger.warn(
      { event: 'api.open' },
      'API_KEYS is not set: the API accepts every request WITHOUT AUTHENTICATION. Set API_KEYS (name:role:key entries, e.g. ci:operate:<random>) for anything but local development.',
    );
  }
  const app = createApp(apiDeps(ctx), [dashboardRoutes]);
  const loop = startSchedulerLoop(ctx);
  const worker = await startWorker(ctx, { kind: 'local' });

  const server = serve({ fetch: app.fetch, port: config.httpPort, hostname: HOST }, (info: AddressInfo) => {
    const url = `http://${HOST}:${info.port}`;
    embedded?.announce(url);
    logger.info({ event: 'api.listening', url, port: info.port }, `listening on ${url}`);
  });
  server.on('error', (error: Error) => {
    process.stderr.write(
      `cannot serve the API on ${HOST}:${config.httpPort}: ${error.message} (set HTTP_PORT to a free port)\n`,
    );
    process.exit(1);
  });

  onShutdownSignal(
    async (signal) => {
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
      await embedded?.stop();
    },
    { exitWithParent: config.exitWithParent },
  );
}

/** Starts the embedded server; a failure is one message (EmbeddedPostgresError), and stops the process. */
async function startEmbedded(): Promise<EmbeddedServer> {
  try {
    return await startEmbeddedPostgres({ cwd: process.cwd() });
  } catch (error) {
    if (error instanceof EmbeddedPostgresError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

main().catch(exitOnStartError);
