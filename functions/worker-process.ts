/**
 * `npm run worker`: a standalone worker process, and the container worker on ECS. SIGTERM stops claiming, lets
 * in-flight attempts finish within SHUTDOWN_GRACE, gives back the rest, and exits.
 */
import { createContext } from './context';
import { exitOnStartError, onShutdownSignal } from './process';
import { startWorker } from './worker-setup';

async function main() {
  const ctx = await createContext({ migrate: true });
  const started = startWorker(ctx, { kind: process.env.WORKER_KIND === 'local' ? 'local' : 'container' });
  // Listening before the worker says it started: a SIGTERM right after that line must drain, not kill.
  onShutdownSignal(async (signal) => {
    const worker = await started;
    ctx.logger.info({ event: 'worker.shutdown', signal, worker_id: worker.worker.id, in_flight: worker.worker.inFlight });
    await worker.stop();
    await ctx.close();
  });
  await started;
}

main().catch(exitOnStartError);
