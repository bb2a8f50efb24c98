/**
 * The short-lane worker on Lambda, invoked by the bus rule on every `work-available` event (infra/workers.ts).
 * It drains the `short` lane (never `long`: those jobs may outlive any Lambda) until either no work has been seen
 * for IDLE_EXIT_MS (and nothing delayed comes due before the next tick after its start, which the tick woke it
 * for), or its
 * remaining time drops below the longest attempt it may start (SHORT_LANE_MAX_TIMEOUT) plus
 * a margin (SHUTDOWN_GRACE, or 10 s when that is 0): it never starts an attempt it cannot finish. It then waits for
 * its running attempts, writes every outcome, deregisters and returns its counts.
 */
import { Worker, type Runner, type WorkerCounts } from '@jobs/core';
import { BUILTIN_HANDLERS, createRunner, type Handler } from '@jobs/runner';
import type { Context as LambdaContext, EventBridgeEvent } from 'aws-lambda';
import { hostname } from 'node:os';
import { commandSetup, type CommandSetup } from './command-setup';
import { newWorkerId } from './context';
import type { WorkAvailableDetail } from './events';
import { budgetMs, lambdaHandler, lambdaResources, wakeHorizonMs, type LambdaResources } from './lambda';
import { VERSION, liveOutputFor, loadHandlers, secretSource, targetOptions } from './worker-setup';

/** No work seen for this long ends the invocation: a woken Lambda must not bill for waiting. */
const IDLE_EXIT_MS = 2_000;
/** Margin when SHUTDOWN_GRACE is 0. */
const DEFAULT_MARGIN_MS = 10_000;
/** Longest wait for EventBridge to take this invocation's transition events. */
const FLUSH_MAX_MS = 5_000;

export interface WorkerSummary extends WorkerCounts {
  workerId: string | null;
  /**
   * Why claiming ended: `idle`, `budget` (remaining time fell below the limit), `release` (a newer release's workers
   * took over: RELEASE_ID), or `no-budget` (never claimed).
   */
  stoppedBy: 'idle' | 'budget' | 'release' | 'no-budget';
  /** Remaining time below which this invocation stopped claiming. */
  claimUntilRemainingMs: number;
  remainingMs: number;
  ms: number;
}

interface Prepared {
  handlers: Record<string, Handler>;
  commands: CommandSetup;
  /** One per container, so HTTP targets reuse its connection pool from one invocation to the next. */
  runner: Runner;
  /** Its live-output buffer (null: LIVE_OUTPUT=off, or no Redis), written out before each invocation returns. */
  liveOutput: ReturnType<typeof liveOutputFor>;
}

/** Per container context: the loaded handlers, the command setup and the cancel subscription, set up once. */
const prepared = new WeakMap<LambdaResources, Promise<Prepared>>();
/** The worker of the invocation in progress, for cancel messages on the container's subscription. */
let active: Worker | null = null;

/**
 * Drains the short lane. Exported for tests; `handler` is this behind the shared middy wiring.
 * @example await drainShortLane(workAvailableEvent, context)
 */
async function drainShortLane(
  _event: EventBridgeEvent<'work-available', WorkAvailableDetail>,
  context: LambdaContext,
): Promise<WorkerSummary> {
  const started = Date.now();
  const ctx = await lambdaResources();
  const { config, logger } = ctx;
  const margin = config.shutdownGraceMs > 0 ? config.shutdownGraceMs : DEFAULT_MARGIN_MS;
  const claimUntilRemainingMs = config.shortLaneMaxTimeoutMs + margin;
  const empty: WorkerCounts = {
    claimed: 0,
    started: 0,
    succeeded: 0,
    failed: 0,
    dead: 0,
    rejected: 0,
    skipped: 0,
    released: 0,
  };
  const summary = (
    workerId: string | null,
    counts: WorkerCounts,
    stoppedBy: WorkerSummary['stoppedBy'],
  ): WorkerSummary => ({
    workerId,
    ...counts,
    stoppedBy,
    claimUntilRemainingMs,
    remainingMs: context.getRemainingTimeInMillis(),
    ms: Date.now() - started,
  });

  if (context.getRemainingTimeInMillis() < claimUntilRemainingMs) {
    logger.error({
      event: 'lambda.worker_no_budget',
      remaining_ms: context.getRemainingTimeInMillis(),
      needed_ms: claimUntilRemainingMs,
      reason: 'the function timeout must exceed SHORT_LANE_MAX_TIMEOUT + SHUTDOWN_GRACE, or this worker never claims',
    });
    return summary(null, empty, 'no-budget');
  }

  const { runner, liveOutput } = await prepare(ctx);
  const worker = new Worker(
    {
      store: ctx.store,
      queue: ctx.queue,
      runner,
      clock: ctx.clock,
      sink: ctx.sink,
      logger,
    },
    {
      id: newWorkerId('lambda'),
      kind: 'lambda',
      host: hostname(),
      version: VERSION,
      lanes: ['short'],
      concurrency: config.workerConcurrency,
      leaseMs: config.leaseMs,
      release: config.releaseId,
    },
  );
  active = worker;

  let stoppedBy: WorkerSummary['stoppedBy'] = 'idle';
  const mayClaim = () => {
    if (context.getRemainingTimeInMillis() >= claimUntilRemainingMs) return true;
    stoppedBy = 'budget';
    return false;
  };
  // Safety net for an attempt that overruns its timeout and kill grace: shortly before the invocation ends, give
  // whatever still runs back to the queue (as the same attempt) instead of being frozen mid-attempt.
  const releaseAt = Math.min(DEFAULT_MARGIN_MS, Math.max(1000, margin / 2));
  const lastResort = setTimeout(
    () => {
      logger.warn({ event: 'lambda.worker_release', worker_id: worker.id, in_flight: worker.inFlight });
      void worker.stop({ graceMs: 0 });
    },
    budgetMs(context, releaseAt),
  );
  let counts: WorkerCounts;
  try {
    // Waits for delayed work only up to the next tick's wake-up, counted from the start of this invocation: that tick
    // wakes a worker for what comes due after it, so a job due every minute does not keep this one alive.
    counts = await worker.drain({
      mayClaim,
      idleExitMs: IDLE_EXIT_MS,
      waitForDueBefore: started + wakeHorizonMs(config),
    });
  } finally {
    clearTimeout(lastResort);
    active = null;
    // Written out before the invocation returns: a frozen container would hold the rest until its next wake-up.
    await liveOutput?.close();
  }
  const delivered = ctx.events ? await ctx.events.flush(Math.min(FLUSH_MAX_MS, budgetMs(context, 500))) : true;
  const result = summary(worker.id, { ...counts }, worker.supersededBy === null ? stoppedBy : 'release');
  logger.info({ event: 'lambda.worker', ...result, events_delivered: delivered });
  return result;
}

/**
 * Loads HANDLERS_MODULE and subscribes to cancel messages once per container. The subscription has its own Redis
 * connection; without it, a cancel still reaches the attempt through the heartbeat (its lease is gone), only later.
 */
function prepare(ctx: LambdaResources): Promise<Prepared> {
  let ready = prepared.get(ctx);
  if (!ready) {
    ready = (async () => {
      const handlers = { ...BUILTIN_HANDLERS, ...(await loadHandlers(ctx.config.handlersModule)) };
      // Lambda runs as a user of its own with no supervisor in the bundle: commands run unsupervised (README).
      const commands = commandSetup(ctx.config, ctx.logger);
      try {
        const unsubscribe = await ctx.queue.subscribeCancels((ids) => {
          for (const id of ids)
            if (active?.cancel(id))
              ctx.logger.info({ event: 'worker.cancelled', execution_id: id, worker_id: active.id });
        });
        ctx.onClose(unsubscribe);
      } catch (error) {
        ctx.logger.warn({ event: 'lambda.worker_cancel_subscribe_failed', err: String(error) });
      }
      const liveOutput = liveOutputFor(ctx);
      const runner = createRunner({
        handlers,
        commands: commands.enabled,
        supervision: commands.supervision,
        envPassthrough: ctx.config.jobEnvPassthrough,
        secrets: secretSource(ctx),
        tracing: ctx.tracing,
        liveOutput,
        ...targetOptions(ctx.config),
      });
      return { handlers, commands, runner, liveOutput };
    })();
    ready.catch(() => prepared.delete(ctx));
    prepared.set(ctx, ready);
  }
  return ready;
}

export const handler = lambdaHandler('worker', drainShortLane);
