/**
 * @module events — publishes state transitions (and the tick's wake-ups) to an EventBridge bus, batched (PutEvents
 * takes 10 entries a call), with failed entries retried. It never blocks or fails job execution: emit() only
 * enqueues and returns; a full buffer drops the oldest events with a warning (the structured log still has every
 * transition). Event shapes are documented in README "Events"; the wire shape of a transition is transitionRecord().
 */
import type { EventBridgeClient, PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { ExecutionStatus, Logger, Transition, TransitionSink } from '@jobs/core';
import { transitionRecord } from './logger';

/** `source` of every event this system publishes. */
const EVENT_SOURCE = 'jobs.scheduler';
/**
 * One event per state change of an execution; `detail` is the transition's log record (snake_case, ISO time;
 * `trigger` on created/started, `error`, `duration_ms`, `exit_code` on outcomes), never output, payload or config.
 * @example { "event": "execution.transition", "job_id": "42", "execution_id": "1017", "attempt": 2, "from": "running",
 *            "to": "failed", "worker_id": "lambda-169.254.12.1-8-1a2b3c4d", "at": "2026-11-30T12:00:04.512Z",
 *            "error": "exit code 3", "duration_ms": 1840, "exit_code": 3 }
 */
const TRANSITION_DETAIL_TYPE = 'execution.transition';
/**
 * The tick's wake-up for the worker Lambda: short-lane work is ready or due within the lookahead.
 * @example { "lanes": { "short": { "ready": 3, "delayed": 1 } } }
 */
export const WORK_AVAILABLE_DETAIL_TYPE = 'work-available';

/** PutEvents accepts at most 10 entries per call. */
const ENTRIES_PER_CALL = 10;
/** An error text longer than this is cut in the event (the execution row keeps it whole); keeps 10 entries far below 256 KB. */
const MAX_ERROR_CHARS = 1024;

/** Detail of a `work-available` event: queue depth of the lanes the tick found work in. */
export interface WorkAvailableDetail {
  lanes: { short: { ready: number; delayed: number } };
}

export interface PublisherOptions {
  busName: string;
  logger: Logger;
  /** Defaults to a client with short timeouts (an unreachable endpoint must not hold a batch for minutes). */
  client?: EventBridgeClient;
  /** Most events held while EventBridge is slow or away. */
  maxBuffered?: number;
  /** Attempts per entry before it is given up (logged). */
  maxAttempts?: number;
  /** PutEvents calls in flight at once. */
  concurrency?: number;
  /** First retry delay; doubles per attempt. */
  retryBaseMs?: number;
  /** Publish only transitions into these statuses (EVENT_TRANSITIONS); all when absent. */
  statuses?: readonly ExecutionStatus[] | null;
}

export interface EventPublisher extends TransitionSink {
  /** Enqueues one event of `detailType` with `detail` (already in wire form). */
  publish(detailType: string, detail: Record<string, unknown>): void;
  /**
   * Waits until everything enqueued so far was delivered or given up. True when every event enqueued since the
   * previous flush was delivered; false when some were given up or dropped, or `timeoutMs` passed first.
   */
  flush(timeoutMs?: number): Promise<boolean>;
  /** Flushes within `timeoutMs` (default 5 s), drops what is left (logged), and releases the client. */
  close(timeoutMs?: number): Promise<void>;
}

/** The SDK, loaded on the first send: a request or tick that publishes nothing never loads it. */
const sdk = () => import('./eventbridge-sdk');

/** A client whose calls fail fast: 2 s to connect, 5 s per request, one SDK retry (the publisher retries too). */
async function defaultEventBridgeClient(): Promise<EventBridgeClient> {
  const { EventBridgeClient } = await sdk();
  return new EventBridgeClient({
    maxAttempts: 2,
    requestHandler: { connectionTimeout: 2000, requestTimeout: 5000, throwOnRequestTimeout: true },
  });
}

/**
 * @example
 *   const events = createEventPublisher({ busName: 'jobs', logger });
 *   events.emit(transitions);               // returns at once
 *   await events.flush(2000);               // before a Lambda invocation returns
 */
export function createEventPublisher(options: PublisherOptions): EventPublisher {
  // Made on the first send (and the SDK loaded then), not when the process starts.
  let client: Promise<EventBridgeClient> | null = options.client ? Promise.resolve(options.client) : null;
  const ownsClient = !options.client;
  const maxBuffered = options.maxBuffered ?? 10_000;
  const maxAttempts = options.maxAttempts ?? 5;
  const concurrency = options.concurrency ?? 4;
  const retryBaseMs = options.retryBaseMs ?? 100;
  const statuses = options.statuses ? new Set<ExecutionStatus>(options.statuses) : null;
  type Pending = { entry: PutEventsRequestEntry; attempts: number };
  let buffer: Pending[] = [];
  let sending: Promise<void> | null = null;
  let dropped = 0;
  /** Events given up or dropped since the last flush() returned. */
  let lost = 0;
  let closed = false;
  let wakeSleep: (() => void) | null = null;

  const enqueue = (detailType: string, detail: Record<string, unknown>, time: Date) => {
    if (closed) {
      dropped++;
      lost++;
      return;
    }
    buffer.push({
      entry: {
        EventBusName: options.busName,
        Source: EVENT_SOURCE,
        DetailType: detailType,
        Detail: JSON.stringify(detail),
        Time: time,
      },
      attempts: 0,
    });
    if (buffer.length > maxBuffered) {
      const excess = buffer.length - maxBuffered;
      buffer = buffer.slice(excess);
      dropped += excess;
      lost += excess;
    }
    sending ??= drain().finally(() => (sending = null));
  };

  /** Sends one batch; returns the entries to try again. */
  async function send(batch: Pending[]): Promise<Pending[]> {
    try {
      client ??= defaultEventBridgeClient().catch((error: unknown) => {
        client = null;
        throw error;
      });
      const [{ PutEventsCommand }, eventBridge] = await Promise.all([sdk(), client]);
      const result = await eventBridge.send(new PutEventsCommand({ Entries: batch.map((b) => b.entry) }));
      // Entries answer in request order; an entry with an ErrorCode failed on its own.
      const failed = batch.filter(
        (_, i) => result.Entries?.[i]?.ErrorCode || (!result.Entries && result.FailedEntryCount),
      );
      if (failed.length > 0) {
        const codes = [...new Set(result.Entries?.map((e) => e.ErrorCode).filter(Boolean))];
        options.logger.warn({ event: 'events.entries_failed', count: failed.length, codes });
      }
      return failed;
    } catch (error) {
      options.logger.warn({ event: 'events.put_failed', count: batch.length, err: String(error) });
      return batch;
    }
  }

  async function drain(): Promise<void> {
    // Let the rest of this turn's emits join, so one emit() of 25 transitions makes 3 calls, not 4.
    await new Promise((resolve) => setImmediate(resolve));
    while (buffer.length > 0 && !closed) {
      const batches: Pending[][] = [];
      while (buffer.length > 0 && batches.length < concurrency) batches.push(buffer.splice(0, ENTRIES_PER_CALL));
      const failed = (await Promise.all(batches.map(send))).flat();
      const retry = failed.filter((f) => ++f.attempts < maxAttempts);
      if (failed.length > retry.length) {
        lost += failed.length - retry.length;
        options.logger.warn({ event: 'events.given_up', count: failed.length - retry.length, attempts: maxAttempts });
      }
      if (dropped > 0) {
        options.logger.warn({ event: 'events.dropped', count: dropped, reason: 'buffer full' });
        dropped = 0;
      }
      if (retry.length > 0) {
        buffer.unshift(...retry);
        await sleep(retryBaseMs * 2 ** Math.min(Math.min(...retry.map((r) => r.attempts)) - 1, 6));
      }
    }
    if (closed && buffer.length > 0) {
      options.logger.warn({ event: 'events.dropped', count: buffer.length + dropped, reason: 'publisher closed' });
      lost += buffer.length;
      buffer = [];
      dropped = 0;
    }
  }

  /** A retry wait that close() can cut short. */
  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      wakeSleep = done;
      function done() {
        clearTimeout(timer);
        wakeSleep = null;
        resolve();
      }
    });
  }

  async function flush(timeoutMs = Number.POSITIVE_INFINITY): Promise<boolean> {
    if (!(await settled(timeoutMs))) return false;
    const complete = lost === 0;
    lost = 0;
    return complete;
  }

  async function settled(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (sending) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      if (!Number.isFinite(left)) {
        await sending;
        continue;
      }
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        sending.then(() => false),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), left))),
      ]);
      clearTimeout(timer);
      if (timedOut) return false;
    }
    return true;
  }

  return {
    emit(transitions: readonly Transition[]) {
      for (const t of transitions)
        if (!statuses || statuses.has(t.to)) enqueue(TRANSITION_DETAIL_TYPE, transitionDetail(t), t.at);
    },
    publish(detailType, detail) {
      enqueue(detailType, detail, new Date());
    },
    flush,
    async close(timeoutMs = 5000) {
      const flushed = await settled(timeoutMs);
      closed = true;
      if (!flushed) {
        wakeSleep?.();
        // An in-flight call ends within the client's request timeout; the loop then drops the rest.
        await sending;
      }
      if (ownsClient && client) (await client.catch(() => null))?.destroy();
    },
  };
}

/** A transition's event detail: its log record, with an over-long error text cut. */
function transitionDetail(t: Transition): Record<string, unknown> {
  const record = transitionRecord(t);
  if (typeof record.error === 'string' && record.error.length > MAX_ERROR_CHARS) {
    record.error = `${record.error.slice(0, MAX_ERROR_CHARS)}… [truncated]`;
  }
  return record;
}
