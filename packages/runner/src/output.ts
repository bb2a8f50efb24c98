/**
 * @module output — captures a stream's bytes up to a cap, keeping the head and the tail (where errors are) and
 * marking the cut with how many bytes were dropped.
 */
import { completeUtf8End } from '@jobs/core';

/** Bytes kept in all: the first half and the last half of what was written. */
export const DEFAULT_OUTPUT_LIMIT = 64 * 1024;

export interface CappedOutputOptions {
  /** Called with every chunk as it is written, before any cut (live output of a running attempt). */
  onChunk?: (chunk: Buffer) => void;
}

/**
 * @example
 *   const out = new CappedOutput(64 * 1024);
 *   out.write(bigBuffer);
 *   out.toString(); // first 32 KiB, "[… N bytes of output dropped …]", last 32 KiB
 */
export class CappedOutput {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  /** The latest chunks, at least tailLimit bytes of them once that much was written past the head. */
  private readonly tail: Buffer[] = [];
  private tailBytes = 0;
  private total = 0;
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private cutNote: string | null = null;

  constructor(
    limit: number = DEFAULT_OUTPUT_LIMIT,
    private readonly options: CappedOutputOptions = {},
  ) {
    this.headLimit = Math.ceil(limit / 2);
    this.tailLimit = Math.floor(limit / 2);
  }

  write(chunk: Buffer | string): void {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (buffer.length === 0) return;
    this.options.onChunk?.(buffer);
    this.total += buffer.length;
    let rest = buffer;
    const room = this.headLimit - this.headBytes;
    if (room > 0) {
      const part = rest.length <= room ? rest : rest.subarray(0, room);
      this.head.push(part);
      this.headBytes += part.length;
      rest = rest.subarray(part.length);
    }
    if (rest.length === 0 || this.tailLimit === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    // Keep at most one chunk beyond what the tail needs, so memory stays near the limit however much is written.
    while (this.tail.length > 1 && this.tailBytes - this.tail[0]!.length >= this.tailLimit)
      this.tailBytes -= this.tail.shift()!.length;
  }

  get truncated(): boolean {
    return this.dropped > 0 || this.cutNote !== null;
  }

  /** Bytes written but kept neither in the head nor in the tail. */
  private get dropped(): number {
    return this.total - this.headBytes - Math.min(this.tailBytes, this.tailLimit);
  }

  /** As much written as the limit holds: a reader that need not read to the end may stop (and say so with `markCut`). */
  get full(): boolean {
    return this.total >= this.headLimit + this.tailLimit;
  }

  /** Marks the text as cut by the reader (the source was not read to its end, so no byte count is known). */
  markCut(note: string): void {
    this.cutNote = note;
  }

  /**
   * The captured text. A cut is marked with the number of bytes dropped between the head and the tail; the cut
   * never splits a UTF-8 character (the partial bytes count as dropped).
   */
  toString(): string {
    const note = this.cutNote === null ? '' : `\n${this.cutNote}`;
    // The common case, a short output in one chunk (or none): decoded as is, without copying it first.
    if (this.tail.length === 0 && this.head.length <= 1)
      return (this.head.length === 0 ? '' : this.head[0]!.toString('utf8')) + note;
    const head = Buffer.concat(this.head);
    if (this.dropped <= 0) return Buffer.concat([head, ...this.tail]).toString('utf8') + note;
    const joined = Buffer.concat(this.tail);
    let tail = joined.subarray(joined.length - this.tailLimit);
    const headEnd = completeUtf8End(head);
    // A tail that starts inside a character starts at the next one.
    let skip = 0;
    while (skip < tail.length && skip < 4 && (tail[skip]! & 0xc0) === 0x80) skip++;
    tail = tail.subarray(skip);
    const dropped = this.total - headEnd - tail.length;
    return `${head.subarray(0, headEnd).toString('utf8')}\n[… ${dropped} bytes of output dropped …]\n${tail.toString('utf8')}${note}`;
  }
}
