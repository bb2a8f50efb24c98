/**
 * @module events — publishes state transitions to an EventBridge bus, batched (PutEvents takes 10 entries), with
 * failed entries retried. It never blocks or fails job execution: emit() only enqueues; a full buffer drops the
 * oldest events with a warning (the structured log still has every transition).
 */
import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { Logger, Transition, TransitionSink } from '@jobs/core';
import { transitionRecord } from './logger';

export const EVENT_SOURCE = 'jobs.scheduler';
export const TRANSITION_DETAIL_TYPE = 'execution.transition';
export const WORK_AVAILABLE_DETAIL_TYPE = 'work-available';

export interface PublisherOptions {
  busName: string;
  logger: Logger;
  client?: EventBridgeClient;
  /** Most events held while EventBridge is slow or away. */
  maxBuffered?: number;
  /** Attempts per entry before it is given up (logged). */
  maxAttempts?: number;
}

export function createEventPublisher(options: PublisherOptions): TransitionSink & {
  flush(): Promise<void>;
  close(): Promise<void>;
  publish(detailType: string, detail: Record<string, unknown>): void;
} {
  const client = options.client ?? new EventBridgeClient({});
  const maxBuffered = options.maxBuffered ?? 10_000;
  const maxAttempts = options.maxAttempts ?? 5;
  let buffer: { entry: PutEventsRequestEntry; attempts: number }[] = [];
  let sending: Promise<void> | null = null;
  let dropped = 0;

  const enqueue = (detailType: string, detail: Record<string, unknown>, time: Date) => {
    buffer.push({
      entry: { EventBusName: options.busName, Source: EVENT_SOURCE, DetailType: detailType, Detail: JSON.stringify(detail), Time: time },
      attempts: 0,
    });
    if (buffer.length > maxBuffered) {
      const excess = buffer.length - maxBuffered;
      buffer = buffer.slice(excess);
      dropped += excess;
    }
    if (!sending) sending = drain().finally(() => (sending = null));
  };

  async function drain(): Promise<void> {
    while (buffer.length > 0) {
      const batch = buffer.splice(0, 10);
      let failed: typeof batch = [];
      try {
        const result = await client.send(new PutEventsCommand({ Entries: batch.map((b) => b.entry) }));
        // Entries answer in request order; an entry with an ErrorCode failed on its own.
        result.Entries?.forEach((e, i) => {
          if (e.ErrorCode) failed.push(batch[i]!);
        });
      } catch (error) {
        options.logger.warn({ event: 'events.put_failed', count: batch.length, err: String(error) });
        failed = batch;
      }
      const retry = failed.filter((f) => ++f.attempts < maxAttempts);
      if (failed.length > retry.length) {
        options.logger.warn({ event: 'events.given_up', count: failed.length - retry.length });
      }
      if (retry.length > 0) {
        buffer.unshift(...retry);
        await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** Math.min(retry[0]!.attempts, 5)));
      }
      if (dropped > 0) {
        options.logger.warn({ event: 'events.dropped', count: dropped, reason: 'buffer full' });
        dropped = 0;
      }
    }
  }

  return {
    emit(transitions: readonly Transition[]) {
      for (const t of transitions) enqueue(TRANSITION_DETAIL_TYPE, transitionRecord(t), t.at);
    },
    publish(detailType, detail) {
      enqueue(detailType, detail, new Date());
    },
    async flush() {
      while (sending) await sending;
    },
    async close() {
      while (sending) await sending;
      client.destroy();
    },
  };
}
