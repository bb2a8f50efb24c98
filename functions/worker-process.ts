/**
 * `npm run worker`: a standalone worker process, and the container worker on ECS. SIGTERM stops claiming, lets
 * in-flight attempts finish within SHUTDOWN_GRACE, gives back the rest, and exits. A worker whose release
 * (RELEASE_ID) a newer deploy superseded retires: it stops claiming, lets its attempts finish, and exits 0 (a SIGTERM
 * meanwhile gives back what still runs at the grace).
 */
import { createContext } from './context';
import { exitOnStartError, onShutdownSignal } from './process';
import { createWorkerMetrics } from './worker-metrics';
import { startWorker } from './worker-setup';

async function main() {
  // Migrations run once per deploy (its migration step, or `npm run migrate`), never here: wait for the schema.
  const ctx = await createContext({ requireSchema: true });
  const { metricsPort } = ctx.config;
  const metrics = metricsPort === null ? undefined : createWorkerMetrics();
  let metricsServer: { close(): Promise<void> } | null = null;
  /** One shutdown, whichever asks first; a later request (SIGTERM while retiring) only shortens the grace. */
  let finished: Promise<void> | null = null;
  const shutdown = async (graceMs?: number) => {
    const { stop } = await started;
    const stopping = stop(graceMs);
    finished ??= (async () => {
      await stopping;
      await metricsServer?.close();
      await ctx.close();
    })();
    await finished;
  };
  const started = startWorker(ctx, {
    kind: process.env.WORKER_KIND === 'local' ? 'local' : 'container',
    metrics,
    onSuperseded: (release) =>
      void shutdown(Number.POSITIVE_INFINITY).then(
        () => {
          ctx.logger.info({ event: 'worker.retired', newer_release: release });
          process.exit(0);
        },
        (error) => {
          process.stderr.write(`shutdown failed: ${String(error)}\n`);
          process.exit(1);
        },
      ),
  });
  // Listening before the worker says it started: a SIGTERM right after that line must drain, not kill.
  onShutdownSignal(
    async (signal) => {
      const { worker } = await started;
      ctx.logger.info({
        event: 'worker.shutdown',
        signal,
        worker_id: worker.id,
        in_flight: worker.inFlight,
      });
      await shutdown();
    },
    { exitWithParent: ctx.config.exitWithParent },
  );
  const { worker } = await started;
  if (metrics && metricsPort !== null) {
    const served = await metrics.serve(worker, { port: metricsPort, token: ctx.config.metricsToken });
    metricsServer = served;
    ctx.logger.info({
      event: 'worker.metrics_listening',
      url: `http://127.0.0.1:${served.port}/metrics`,
      port: served.port,
    });
  }
}

main().catch(exitOnStartError);
