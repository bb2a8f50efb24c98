/** @module worker-setup — builds a Worker on a context: runner with handlers (and ECS task protection), cancel subscription, lifecycle. */
import { Worker, createAddressPolicy, type Runner, type WorkerKind } from '@jobs/core';
import { createLiveOutput, queueKeys } from '@jobs/queue';
import { createPostgresLiveOutput } from '@jobs/queue-postgres';
import { BUILTIN_HANDLERS, createRunner, type Handler, type RunnerOptions, type SecretSource } from '@jobs/runner';
import { secretValues } from '@jobs/store';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { commandSetup } from './command-setup';
import type { Config } from './config';
import type { Context } from './context';
import { newWorkerId } from './context';
import { createTaskProtection, protectLongAttempts } from './task-protection';
import type { WorkerMetrics } from './worker-metrics';

export const VERSION = '0.1.0';

/** Loads `HANDLERS_MODULE`: a module whose `handlers` (or default) export maps names to handler functions. */
export async function loadHandlers(modulePath: string | null): Promise<Record<string, Handler>> {
  if (!modulePath) return {};
  const mod = await import(pathToFileURL(resolve(modulePath)).href);
  const handlers = mod.handlers ?? mod.default;
  if (!handlers || typeof handlers !== 'object') {
    throw new Error(`HANDLERS_MODULE ${modulePath} must export \`handlers\` (an object of name -> function)`);
  }
  return handlers;
}

/** How HTTP and Lambda targets run: the address guard's allow list, the signing secrets, the Lambda endpoint. */
export function targetOptions(config: Config): Pick<RunnerOptions, 'http' | 'lambda'> {
  return {
    http: { policy: createAddressPolicy(config.httpTargetAllow), signingSecrets: config.httpSigningSecrets },
    lambda: { endpoint: config.lambdaEndpoint },
  };
}

/** Where this worker reads job secrets (SECRETS_KEY); null: secrets are off, and an attempt that needs one fails. */
export function secretSource(ctx: Pick<Context, 'config' | 'pool'>): SecretSource | null {
  const keyring = ctx.config.secretsKeyring;
  return keyring ? { values: (names) => secretValues(ctx.pool, keyring, names) } : null;
}

export interface StartedWorker {
  worker: Worker;
  stop(graceMs?: number): Promise<void>;
}

/** The live-output buffer of a worker process (LIVE_OUTPUT), where its queue lives, or null when it is off. */
export function liveOutputFor(ctx: Pick<Context, 'config' | 'redis' | 'pool' | 'logger'>) {
  if (!ctx.config.liveOutput) return null;
  const onError = (error: unknown) => ctx.logger.warn({ event: 'worker.live_output_failed', err: String(error) });
  if (ctx.redis)
    return createLiveOutput(ctx.redis, queueKeys(ctx.config.queuePrefix), {
      onError,
      maxBytes: ctx.config.liveOutputMaxBytes,
      budgetBytes: ctx.config.liveOutputBudgetBytes,
    });
  return createPostgresLiveOutput(ctx.pool, { onError });
}

export async function startWorker(
  ctx: Context,
  options: {
    kind: WorkerKind;
    handlers?: Record<string, Handler>;
    concurrency?: number;
    id?: string;
    metrics?: WorkerMetrics;
    /** Told when the worker retires for a newer release (RELEASE_ID), with the promise of its end. */
    onSuperseded?: (release: string, stopped: Promise<void>) => void;
  },
): Promise<StartedWorker> {
  const handlers = { ...BUILTIN_HANDLERS, ...(await loadHandlers(ctx.config.handlersModule)), ...options.handlers };
  const commands = commandSetup(ctx.config, ctx.logger);
  const liveOutput = liveOutputFor(ctx);
  let runner: Runner = createRunner({
    handlers,
    commands: commands.enabled,
    supervision: commands.supervision,
    envPassthrough: ctx.config.jobEnvPassthrough,
    secrets: secretSource(ctx),
    tracing: ctx.tracing,
    liveOutput,
    ...targetOptions(ctx.config),
  });
  // On ECS: a scale-in or deploy must not stop this task while it runs attempts longer than its stop grace.
  if (ctx.config.ecsAgentUri) {
    runner = protectLongAttempts(
      runner,
      createTaskProtection({ agentUri: ctx.config.ecsAgentUri, logger: ctx.logger }),
      { graceMs: ctx.config.shutdownGraceMs },
    );
  }
  const worker = new Worker(
    {
      store: options.metrics ? options.metrics.timed(ctx.store) : ctx.store,
      queue: ctx.queue,
      runner,
      clock: ctx.clock,
      sink: ctx.sink,
      logger: ctx.logger,
    },
    {
      id: options.id ?? newWorkerId(options.kind),
      kind: options.kind,
      host: hostname(),
      version: VERSION,
      lanes: ctx.config.workerLanes,
      concurrency: options.concurrency ?? ctx.config.workerConcurrency,
      leaseMs: ctx.config.leaseMs,
      release: ctx.config.releaseId,
      onSuperseded: options.onSuperseded,
    },
  );
  const unsubscribe = await ctx.queue.subscribeCancels((ids) => {
    for (const id of ids)
      if (worker.cancel(id)) ctx.logger.info({ event: 'worker.cancelled', execution_id: id, worker_id: worker.id });
  });
  await worker.start();
  ctx.logger.info({
    event: 'worker.started',
    worker_id: worker.id,
    kind: options.kind,
    lanes: ctx.config.workerLanes,
    concurrency: options.concurrency ?? ctx.config.workerConcurrency,
    handlers: Object.keys(handlers),
    commands: commands.enabled
      ? commands.supervision
        ? `supervised, as ${commands.supervision.user ?? "the worker's user"}`
        : 'unsupervised'
      : 'off',
  });
  // One close-down, however often stop() is called (a SIGTERM while the worker retires only shortens the grace).
  let closed: Promise<void> | null = null;
  return {
    worker,
    stop(graceMs = ctx.config.shutdownGraceMs) {
      const stopped = worker.stop({ graceMs });
      closed ??= (async () => {
        await stopped;
        await liveOutput?.close();
        await unsubscribe();
        ctx.logger.info({ event: 'worker.stopped', worker_id: worker.id, counts: worker.counts });
      })();
      return closed;
    },
  };
}
