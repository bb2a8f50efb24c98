/** @module output — captures a stream's bytes up to a cap, keeping the head and marking what was cut. */

export const DEFAULT_OUTPUT_LIMIT = 64 * 1024;

export class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private dropped = 0;
  private cutNote: string | null = null;

  constructor(private readonly limit: number = DEFAULT_OUTPUT_LIMIT) {}

  write(chunk: Buffer | string): void {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const room = this.limit - this.kept;
    if (room <= 0) {
      this.dropped += buffer.length;
      return;
    }
    const part = buffer.length <= room ? buffer : buffer.subarray(0, room);
    this.chunks.push(part);
    this.kept += part.length;
    this.dropped += buffer.length - part.length;
  }

  get truncated(): boolean {
    return this.dropped > 0 || this.cutNote !== null;
  }

  /** No room left: a reader may stop reading (and say so with `markCut`). */
  get full(): boolean {
    return this.kept >= this.limit;
  }

  /** Marks the text as cut by the reader (the source was not read to its end, so no byte count is known). */
  markCut(note: string): void {
    this.cutNote = note;
  }

  /** The captured text; a cut is marked with how many bytes were dropped. Invalid UTF-8 at the cut is replaced. */
  toString(): string {
    const text = Buffer.concat(this.chunks).toString('utf8');
    if (this.cutNote !== null) return `${text}\n${this.cutNote}`;
    return this.dropped > 0 ? `${text}\n[output truncated: ${this.dropped} more bytes not captured]` : text;
  }
}
