/**
 * @module stream-lines — merges a command's stdout and stderr into one text, line by line, with every stderr line
 * marked: `[stderr] ` before it. A stdout line that itself starts with `[stderr] ` or `[stdout] ` gets `[stdout] `
 * before it, so every line says where it came from, unambiguously, while plain stdout reads as it was printed.
 *
 * Lines are kept whole: a stream's unfinished line waits for its newline (or the end) while the other stream's
 * lines go out, so lines appear in the order they were finished. A line that grows past `maxPendingBytes` goes out
 * unfinished, and the rest of it follows as it comes; should the other stream print before it ends, a newline is
 * put in first, the one case where the text differs from what the command printed.
 */

export type StreamName = 'stdout' | 'stderr';

const STDERR_MARK = '[stderr] ';
const STDOUT_MARK = '[stdout] ';

const STDERR = Buffer.from(STDERR_MARK);
const STDOUT = Buffer.from(STDOUT_MARK);
const NEWLINE = Buffer.from('\n');

export class StreamLines {
  private readonly pending: Record<StreamName, Buffer[]> = { stdout: [], stderr: [] };
  private readonly pendingBytes: Record<StreamName, number> = { stdout: 0, stderr: 0 };
  /** The stream whose unfinished line was let out (what follows of it goes out unmarked), or null. */
  private open: StreamName | null = null;

  constructor(
    private readonly emit: (chunk: Buffer) => void,
    private readonly maxPendingBytes = 8 * 1024,
  ) {}

  write(stream: StreamName, chunk: Buffer): void {
    let rest = chunk;
    for (let nl = rest.indexOf(10); nl >= 0; nl = rest.indexOf(10)) {
      this.pending[stream].push(rest.subarray(0, nl + 1));
      this.pendingBytes[stream] += nl + 1;
      this.flush(stream);
      rest = rest.subarray(nl + 1);
    }
    if (rest.length === 0) return;
    this.pending[stream].push(rest);
    this.pendingBytes[stream] += rest.length;
    if (this.pendingBytes[stream] >= this.maxPendingBytes) {
      this.flush(stream);
      this.open = stream;
    }
  }

  /** Lets out what both streams still hold (unfinished last lines). */
  end(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      if (this.pendingBytes[stream] > 0) {
        this.flush(stream);
        this.open = stream;
      }
    }
  }

  /** Lets out the stream's pending bytes, marked when they start a line; closes the other stream's open line. */
  private flush(stream: StreamName): void {
    const parts = this.pending[stream];
    if (parts.length === 0) return;
    const line = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    this.pending[stream] = [];
    this.pendingBytes[stream] = 0;
    const continues = this.open === stream;
    if (this.open !== null && !continues) this.emit(NEWLINE);
    this.open = null;
    if (!continues) {
      if (stream === 'stderr') this.emit(STDERR);
      else if (startsWith(line, STDERR) || startsWith(line, STDOUT)) this.emit(STDOUT);
    }
    this.emit(line);
  }
}

function startsWith(line: Buffer, prefix: Buffer): boolean {
  return line.length >= prefix.length && line.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;
}
