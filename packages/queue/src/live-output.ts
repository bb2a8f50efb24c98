/**
 * @module live-output — what running attempts print, in a short-lived Redis stream per execution, for readers while
 * they run. The worker side buffers chunks in memory and writes every attempt's new output in one pipeline per
 * interval, so a job that prints a line and ends within the interval never reaches Redis at all (its output goes
 * to PostgreSQL with its outcome, as before): the drain does not pay for streaming. A stream expires `ttlMs` after
 * its last write and holds at most `maxEntries` writes of at most `maxFlushBytes` each.
 */
import { completeUtf8End, type LiveOutputReader, type LiveOutputSink } from '@jobs/core';
import type { QueueKeys } from './keys';
import type { RedisClient } from './queue';

export interface LiveOutputOptions {
  flushMs?: number;
  ttlMs?: number;
  maxEntries?: number;
  maxFlushBytes?: number;
  onError?: (error: unknown) => void;
}

interface Pending {
  chunks: Buffer[];
  bytes: number;
  /** Bytes dropped since the last write because one interval's output exceeded maxFlushBytes. */
  dropped: number;
  /** Written to Redis at least once: readers may be looking, so what is left goes out even after the end. */
  written: boolean;
  ended: boolean;
}

export const LIVE_OUTPUT_DEFAULTS = { flushMs: 250, ttlMs: 3_600_000, maxEntries: 512, maxFlushBytes: 16 * 1024 } as const;

/**
 * @example
 *   const live = createLiveOutput(redis, queue.keys);
 *   const runner = createRunner({ liveOutput: live });
 *   await live.close();
 */
export function createLiveOutput(redis: RedisClient, keys: QueueKeys, options: LiveOutputOptions = {}): LiveOutputSink & {
  flush(): Promise<void>;
  close(): Promise<void>;
} {
  const { flushMs, ttlMs, maxEntries, maxFlushBytes } = { ...LIVE_OUTPUT_DEFAULTS, ...options };
  const pending = new Map<string, Pending>();
  let timer: NodeJS.Timeout | null = null;
  let flushing: Promise<void> | null = null;

  const start = () => {
    if (timer) return;
    timer = setInterval(() => void flush(), flushMs);
    timer.unref?.();
  };

  function append(executionId: string, chunk: Buffer): void {
    let p = pending.get(executionId);
    if (!p) pending.set(executionId, (p = { chunks: [], bytes: 0, dropped: 0, written: false, ended: false }));
    p.chunks.push(chunk);
    p.bytes += chunk.length;
    // Over one interval's allowance: keep the newest bytes (the tail is what a follower wants to see).
    while (p.chunks.length > 1 && p.bytes - p.chunks[0]!.length >= maxFlushBytes) {
      const gone = p.chunks.shift()!;
      p.bytes -= gone.length;
      p.dropped += gone.length;
    }
    start();
  }

  function end(executionId: string): void {
    const p = pending.get(executionId);
    if (!p) return;
    // Never written: nobody can have read any of it, and the outcome carries it. Otherwise the rest goes out.
    if (!p.written) pending.delete(executionId);
    else p.ended = true;
  }

  async function writeOut(): Promise<void> {
    if (pending.size === 0) return;
    const pipeline = redis.pipeline();
    let writes = 0;
    for (const [id, p] of pending) {
      if (p.bytes > 0) {
        const joined = Buffer.concat(p.chunks);
        // A character cut by the interval waits for its last bytes (unless the attempt ended).
        const cut = p.ended ? joined.length : completeUtf8End(joined);
        const text = (p.dropped > 0 ? `[… ${p.dropped} bytes not streamed …]\n` : '') + joined.subarray(0, cut).toString('utf8');
        p.chunks = cut < joined.length ? [joined.subarray(cut)] : [];
        p.bytes = joined.length - cut;
        p.dropped = 0;
        if (text.length > 0) {
          const key = keys.output(id);
          pipeline.xadd(key, 'MAXLEN', '~', String(maxEntries), '*', 'd', text).pexpire(key, ttlMs);
          writes++;
          p.written = true;
        }
      }
      if (p.ended) pending.delete(id);
    }
    if (pending.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
    if (writes === 0) return;
    for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
  }

  function flush(): Promise<void> {
    // One write at a time; an interval that finds one in flight skips (its output waits for the next one).
    if (flushing) return flushing;
    flushing = writeOut()
      .catch((error) => options.onError?.(error))
      .finally(() => {
        flushing = null;
      });
    return flushing;
  }

  return {
    append,
    end,
    flush,
    async close() {
      for (const p of pending.values()) p.ended = true;
      await flush();
      if (timer) clearInterval(timer);
      timer = null;
      pending.clear();
    },
  };
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
