/**
 * @module live-output — what running attempts print, in a short-lived Redis stream per execution, for readers while
 * they run. The buffering is core's (createLiveOutputBuffer: one write per interval, nothing for a job that prints a
 * line and ends within it); this module writes each interval's output in one pipeline. A stream expires `ttlMs`
 * after its last write and holds at most `maxEntries` writes of at most `maxFlushBytes` each.
 */
import {
  LIVE_OUTPUT_DEFAULTS,
  createLiveOutputBuffer,
  type LiveOutputBuffer,
  type LiveOutputOptions,
  type LiveOutputReader,
} from '@jobs/core';
import type { QueueKeys } from './keys';
import type { RedisClient } from './queue';

/**
 * @example
 *   const live = createLiveOutput(redis, queue.keys);
 *   const runner = createRunner({ liveOutput: live });
 *   await live.close();
 */
export function createLiveOutput(
  redis: RedisClient,
  keys: QueueKeys,
  options: LiveOutputOptions = {},
): LiveOutputBuffer {
  const { flushMs, ttlMs, maxEntries, maxFlushBytes } = { ...LIVE_OUTPUT_DEFAULTS, ...options };
  return createLiveOutputBuffer(
    async (writes) => {
      const pipeline = redis.pipeline();
      for (const w of writes) {
        const key = keys.output(w.executionId);
        pipeline.xadd(key, 'MAXLEN', '~', String(maxEntries), '*', 'd', w.text).pexpire(key, ttlMs);
      }
      for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
    },
    { flushMs, maxFlushBytes, onError: options.onError },
  );
}

/**
 * Reads the streams createLiveOutput writes: a stream's writes after a cursor, oldest first, at most 1,000 a call.
 * @example const entries = await liveOutputReader(redis, queue.keys).read('42', null);
 */
export function liveOutputReader(redis: RedisClient, keys: QueueKeys): LiveOutputReader {
  return {
    async read(executionId, afterId) {
      const start = afterId === null ? '-' : `(${afterId}`;
      const reply = (await redis.xrange(keys.output(executionId), start, '+', 'COUNT', 1000)) as [string, string[]][];
      return reply.map(([id, fields]) => ({ id, text: fields[1] ?? '' }));
    },
  };
}
