/**
 * @module lambda — wiring shared by the Lambda handlers (tick, worker): one context per container, created on the
 * first invocation and reused by the next ones, and the middy wrapper every handler goes through.
 *
 * A Lambda container runs one invocation at a time and is frozen between them, so the context holds one pg
 * connection (pool max 1), one Redis client, and an EventBridge publisher that each invocation flushes before it
 * returns (a frozen container would otherwise sit on buffered events, and may never be thawed again).
 */
import middy from '@middy/core';
import type { Context as LambdaContext } from 'aws-lambda';
import { loadConfig } from './config';
import { createContext, type Context } from './context';
import { createEmfWriter, type EmfWriter } from './emf';
import { createEventPublisher, type EventPublisher } from './events';
import { createLogger, fanOut } from './logger';

export interface LambdaResources extends Context {
  /** The bus publisher when EVENT_BUS_NAME is set (it also receives every transition through `sink`). */
  events: EventPublisher | null;
  /** CloudWatch metrics as EMF log lines when METRICS_NAMESPACE is set. */
  metrics: EmfWriter | null;
  /** Registers cleanup to run before the context closes (e.g. a handler's extra Redis connection). */
  onClose(cleanup: () => Promise<void>): void;
}

let current: Promise<LambdaResources> | null = null;

/**
 * The container's context, built on first use. A failed build (bad configuration) is retried by the next
 * invocation instead of poisoning the container.
 * @example const ctx = await lambdaResources();
 */
export function lambdaResources(): Promise<LambdaResources> {
  current ??= build().catch((error) => {
    current = null;
    throw error;
  });
  return current;
}

async function build(): Promise<LambdaResources> {
  const config = loadConfig();
  // Synchronous writes: an asynchronous log buffer could still hold the last lines when the container freezes.
  const logger = createLogger({ level: config.logLevel, sync: true });
  // The publisher is built here rather than in createContext so that handlers can flush it.
  const ctx = await createContext({ config: { ...config, eventBusName: null }, logger, poolMax: 1, check: false });
  const events = config.eventBusName
    ? createEventPublisher({ busName: config.eventBusName, logger, statuses: config.eventTransitions })
    : null;
  const cleanups: (() => Promise<void>)[] = [];
  return {
    ...ctx,
    config,
    events,
    metrics: config.metricsNamespace ? createEmfWriter({ namespace: config.metricsNamespace }) : null,
    sink: events ? fanOut(ctx.sink, events) : ctx.sink,
    onClose: (cleanup) => void cleanups.push(cleanup),
    async close() {
      for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => undefined);
      await events?.close();
      await ctx.close();
    },
  };
}

/** Closes the cached context so the next invocation builds a new one from the environment (tests, benchmarks). */
export async function resetForTests(): Promise<void> {
  const built = current;
  current = null;
  if (built) await (await built.catch(() => null))?.close();
}

/** Longest an invocation waits at its end for the OTLP exporter to take its spans. */
const TRACES_FLUSH_MS = 2_000;

/**
 * Exports the spans that ended (tracing on only): a container may be frozen, and never thawed, once the invocation
 * returns. Bounded, and never fails the invocation: at worst those spans are lost.
 */
export async function flushTraces(ctx: Pick<Context, 'tracing'> | null): Promise<void> {
  if (!ctx?.tracing) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    ctx.tracing.flush().catch(() => undefined),
    new Promise((r) => (timer = setTimeout(r, TRACES_FLUSH_MS))),
  ]);
  clearTimeout(timer);
}

/** Delayed work due this long after the next tick is still woken for by this one (ticks start a little late). */
const WAKE_HORIZON_MARGIN_MS = 5_000;

/**
 * How far ahead the tick wakes worker Lambdas for delayed work, and how long a woken one waits for such work
 * before it returns: until the next tick, plus a margin.
 */
export function wakeHorizonMs(config: { scheduleIntervalMs: number }): number {
  return config.scheduleIntervalMs + WAKE_HORIZON_MARGIN_MS;
}

/** Milliseconds from now until `context` reaches `marginMs` of remaining time (never negative). */
export function budgetMs(context: Pick<LambdaContext, 'getRemainingTimeInMillis'>, marginMs: number): number {
  return Math.max(0, context.getRemainingTimeInMillis() - marginMs);
}

/**
 * Wraps a handler in middy with the settings every handler here shares:
 * - `callbackWaitsForEmptyEventLoop = false`: the pool, the Redis client and their timers stay alive on purpose
 *   between invocations; the invocation ends when the handler's promise settles, not when the event loop empties.
 * - an error that escapes the handler is logged as one line with the request id, then rethrown (the invocation
 *   fails and is retried or alarmed on by Lambda).
 * @example export const handler = lambdaHandler('tick', async (event, context) => ({ ok: true }));
 */
export function lambdaHandler<E, R>(name: string, fn: (event: E, context: LambdaContext) => Promise<R>) {
  return middy<E, R, Error, LambdaContext>(fn)
    .before((request) => {
      request.context.callbackWaitsForEmptyEventLoop = false;
    })
    .after(async () => {
      await flushTraces(current && (await current.catch(() => null)));
    })
    .onError(async (request) => {
      await flushTraces(current && (await current.catch(() => null)));
      const entry = {
        event: `lambda.${name}_failed`,
        request_id: request.context.awsRequestId,
        err: String(request.error),
      };
      const logger = (current && (await current.catch(() => null))?.logger) || fallbackLogger();
      if (logger) logger.error(entry);
      else process.stderr.write(`${JSON.stringify({ level: 'error', ...entry })}\n`);
    });
}

/** A logger for failures before (or without) a context; null when the configuration itself is invalid. */
function fallbackLogger() {
  try {
    return createLogger({ level: loadConfig().logLevel, sync: true });
  } catch {
    return null;
  }
}
