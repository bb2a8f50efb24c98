/**
 * @module live-output — the worker side of live output, whatever stores it: chunks of running attempts buffered in
 * memory and written out, every attempt's new output in one write per interval, so a job that prints a line and
 * ends within the interval is never written at all (its output goes to PostgreSQL with its outcome): the drain does
 * not pay for streaming. Each store (Redis streams in @jobs/queue, a table in @jobs/queue-postgres) supplies the
 * write of one interval.
 */
import type { LiveOutputSink } from './ports';
import { completeUtf8End } from './utf8';

export interface LiveOutputBufferOptions {
  /** How often buffered output is written out (ms). */
  flushMs: number;
  /** Bytes one attempt may write per interval; beyond it the oldest are dropped (and the drop is marked). */
  maxFlushBytes: number;
  onError?: (error: unknown) => void;
}

/** What a store's writer of live output takes: the buffer's settings and how long and how much the store keeps. */
export interface LiveOutputOptions {
  flushMs?: number;
  /** Kept this long after its last write while the attempt runs. */
  ttlMs?: number;
  /** Kept this long after the attempt ended (its output is then in its outcome): long enough for followers to read the tail. */
  endedTtlMs?: number;
  /** Writes kept per execution, the newest. */
  maxEntries?: number;
  /** Bytes of text kept per execution, the newest (Redis; at least maxFlushBytes). */
  maxBytes?: number;
  /**
   * Bytes of text all executions' live output may hold at once (Redis): at most budgetBytes / maxBytes attempts
   * stream at a time; the output of one more is not streamed until a stream expires (its outcome still has it).
   */
  budgetBytes?: number;
  maxFlushBytes?: number;
  onError?: (error: unknown) => void;
}

/** The same for every store: a follower sees the same stream whichever queue the workers use. */
export const LIVE_OUTPUT_DEFAULTS = {
  flushMs: 250,
  ttlMs: 3_600_000,
  endedTtlMs: 60_000,
  maxEntries: 512,
  maxBytes: 256 * 1024,
  budgetBytes: 64 * 1024 * 1024,
  maxFlushBytes: 16 * 1024,
} as const;

/** One interval's new text of one attempt (empty for an ended attempt that had nothing left to write). */
export interface LiveOutputWrite {
  executionId: string;
  text: string;
  /** The attempt ended: this is its last write (a store may let its output go sooner). */
  ended?: boolean;
}

export interface LiveOutputBuffer extends LiveOutputSink {
  flush(): Promise<void>;
  /** Writes out what is left and stops the timer. */
  close(): Promise<void>;
}

interface Pending {
  chunks: Buffer[];
  bytes: number;
  /** Bytes dropped since the last write because one interval's output exceeded maxFlushBytes. */
  dropped: number;
  /** Written at least once: readers may be looking, so what is left goes out even after the end. */
  written: boolean;
  ended: boolean;
}

/**
 * @example
 *   const live = createLiveOutputBuffer((writes) => store(writes), { flushMs: 250, maxFlushBytes: 16 * 1024 });
 *   live.append('42', Buffer.from('hello\n'));
 *   await live.close();
 */
export function createLiveOutputBuffer(
  write: (writes: LiveOutputWrite[]) => Promise<void>,
  options: LiveOutputBufferOptions,
): LiveOutputBuffer {
  const { flushMs, maxFlushBytes } = options;
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
    const writes: LiveOutputWrite[] = [];
    for (const [id, p] of pending) {
      if (p.bytes > 0) {
        const joined = Buffer.concat(p.chunks);
        // A character cut by the interval waits for its last bytes (unless the attempt ended).
        const cut = p.ended ? joined.length : completeUtf8End(joined);
        const text =
          (p.dropped > 0 ? `[… ${p.dropped} bytes not streamed …]\n` : '') + joined.subarray(0, cut).toString('utf8');
        p.chunks = cut < joined.length ? [joined.subarray(cut)] : [];
        p.bytes = joined.length - cut;
        p.dropped = 0;
        if (text.length > 0) {
          writes.push({ executionId: id, text, ...(p.ended ? { ended: true } : {}) });
          p.written = true;
          if (p.ended) {
            pending.delete(id);
            continue;
          }
        }
      }
      if (p.ended) {
        // Written before and nothing left: the store still hears that it ended.
        if (p.written) writes.push({ executionId: id, text: '', ended: true });
        pending.delete(id);
      }
    }
    if (pending.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
    if (writes.length > 0) await write(writes);
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
