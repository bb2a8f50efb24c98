/** In-process engine pieces bound to a TestEnv: a worker, a tick, the recovery passes, the commands. */
import {
  LANES,
  Worker,
  reapOnce,
  reconcileOnce,
  runTick,
  systemClock,
  type Clock,
  type CommandDeps,
  type Lane,
  type LiveOutputSink,
  type WorkerOptions,
} from '@jobs/core';
import {
  BUILTIN_HANDLERS,
  createRunner,
  findSupervisor,
  type Handler,
  type RunnerOptions,
  type Supervision,
} from '@jobs/runner';
import { randomBytes } from 'node:crypto';
import { recorder, type TestEnv } from './env';

/** Commands run as the real workers run them: supervised, as `nobody` when the tests run as root. */
const supervisorPath = findSupervisor();
export const supervision: Supervision | null = supervisorPath
  ? { path: supervisorPath, user: process.getuid?.() === 0 ? 'nobody' : null }
  : null;

export function engine(env: TestEnv, options: { clock?: Clock } = {}) {
  const rec = recorder();
  const clock = options.clock ?? systemClock;
  const deps = { store: env.store, queue: env.queue, clock, sink: rec.sink, logger: rec.logger };
  const workers: Worker[] = [];
  const unsubscribers: (() => Promise<void>)[] = [];
  return {
    ...rec,
    deps: deps as typeof deps & CommandDeps,
    clock,
    /** Starts a worker in this process; stopped by stopAll(). */
    async worker(
      opts: Partial<WorkerOptions> & {
        handlers?: Record<string, Handler>;
        targets?: Pick<RunnerOptions, 'http' | 'lambda'>;
        liveOutput?: LiveOutputSink;
        /** More runner options (the environment passthrough, secrets). */
        runner?: Partial<RunnerOptions>;
      } = {},
    ) {
      const worker = new Worker(
        {
          ...deps,
          runner: createRunner({
            handlers: { ...BUILTIN_HANDLERS, ...opts.handlers },
            supervision,
            liveOutput: opts.liveOutput,
            ...opts.targets,
            ...opts.runner,
          }),
        },
        {
          id: `test-${randomBytes(4).toString('hex')}`,
          kind: 'local',
          host: 'test',
          version: 'test',
          lanes: opts.lanes ?? (['short', 'long'] as Lane[]),
          concurrency: opts.concurrency ?? 10,
          leaseMs: opts.leaseMs ?? 5000,
          pollMs: opts.pollMs ?? 200,
          ...opts,
        },
      );
      // Cancels reach this worker over pub/sub, as in the real processes (functions/worker-setup.ts).
      const unsubscribe = await env.queue.subscribeCancels((ids) => ids.forEach((id) => worker.cancel(id)));
      await worker.start();
      workers.push(worker);
      unsubscribers.push(unsubscribe);
      return worker;
    },
    tick: (lookaheadMs = 5000, misfireGraceMs?: number) => runTick(deps, { lookaheadMs, misfireGraceMs }),
    reap: () => reapOnce(deps, { lanes: LANES }),
    reconcile: () => reconcileOnce(deps),
    async stopAll(graceMs = 5000) {
      await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs })));
      await Promise.all(unsubscribers.splice(0).map((u) => u()));
    },
  };
}
