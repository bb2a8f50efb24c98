/**
 * `npm run worker`: a standalone worker process, and the container worker on ECS. SIGTERM stops claiming, lets
 * in-flight attempts finish within SHUTDOWN_GRACE, gives back the rest, and exits.
 */
import { createContext } from './context';
import { exitOnStartError, onShutdownSignal } from './process';
import { createWorkerMetrics } from './worker-metrics';
import { startWorker } from './worker-setup';

async function main() {
  const ctx = await createContext({ migrate: true });
  const { metricsPort } = ctx.config;
  const metrics = metricsPort === null ? undefined : createWorkerMetrics();
  const started = startWorker(ctx, { kind: process.env.WORKER_KIND === 'local' ? 'local' : 'container', metrics });
  let metricsServer: { close(): Promise<void> } | null = null;
  // Listening before the worker says it started: a SIGTERM right after that line must drain, not kill.
  onShutdownSignal(
    async (signal) => {
      const worker = await started;
      ctx.logger.info({
        event: 'worker.shutdown',
        signal,
        worker_id: worker.worker.id,
        in_flight: worker.worker.inFlight,
      });
      await worker.stop();
      await metricsServer?.close();
      await ctx.close();
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
