/**
 * @module live-output — what running attempts print, in a short-lived Redis stream per execution, for readers while
 * they run. The buffering is core's (createLiveOutputBuffer: one write per interval, nothing for a job that prints a
 * line and ends within it); this module writes each interval's output in one pipeline of lua/liveoutput-3.lua calls.
 * Live output shares the node with the queue, which refuses writes (claims included) when memory is full, so it is
 * bounded twice: a stream keeps the newest `maxBytes` of text (and `maxEntries` writes), and all streams together
 * at most `budgetBytes` (budgetBytes / maxBytes attempts stream at once; the output of one more is not streamed
 * until another's stream expires). A stream expires `ttlMs` after its last write, or `endedTtlMs` after its
 * attempt ended.
 */
import {
  LIVE_OUTPUT_DEFAULTS,
  createLiveOutputBuffer,
  type LiveOutputBuffer,
  type LiveOutputOptions,
  type LiveOutputReader,
} from '@jobs/core';
import type { QueueKeys } from './keys';
import { LUA_SCRIPTS } from './lua.generated';
import type { RedisClient } from './client';

type WriteScript = (stream: string, index: string, sizes: string, ...args: (string | number)[]) => Promise<number>;

/** The write script as a command of `redis` (ioredis: EVALSHA, EVAL when the script cache lost it). */
function writeScript(redis: RedisClient): WriteScript {
  const commands = redis as unknown as Record<string, unknown>;
  if (typeof commands.liveoutput !== 'function')
    redis.defineCommand('liveoutput', { numberOfKeys: 3, lua: LUA_SCRIPTS['liveoutput-3.lua']! });
  return (commands.liveoutput as WriteScript).bind(redis);
}

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
  const { flushMs, ttlMs, endedTtlMs, maxEntries, maxBytes, budgetBytes, maxFlushBytes } = {
    ...LIVE_OUTPUT_DEFAULTS,
    ...options,
  };
  // One write, its "not streamed" mark included, always fits a stream.
  const perAttempt = Math.max(maxBytes, maxFlushBytes + 64);
  const streams = Math.max(1, Math.floor(budgetBytes / perAttempt));
  writeScript(redis);
  return createLiveOutputBuffer(
    async (writes) => {
      // On a pipeline a script call only queues the command; exec() sends them all and gives every reply.
      const pipeline = redis.pipeline() as unknown as Record<string, (...args: Parameters<WriteScript>) => unknown> & {
        exec(): Promise<[Error | null, unknown][] | null>;
      };
      for (const w of writes) {
        pipeline.liveoutput!(
          keys.output(w.executionId),
          keys.outputIndex,
          keys.outputSizes,
          w.executionId,
          w.text,
          w.ended ? '1' : '0',
          ttlMs,
          endedTtlMs,
          perAttempt,
          maxEntries,
          streams,
        );
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
