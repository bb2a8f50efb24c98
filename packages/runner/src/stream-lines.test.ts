import { describe, expect, it } from 'vitest';
import { StreamLines, type StreamName } from './stream-lines';

function merge(writes: [StreamName, string][], maxPendingBytes?: number): string {
  const out: Buffer[] = [];
  const lines = new StreamLines((b) => out.push(Buffer.from(b)), maxPendingBytes);
  for (const [stream, text] of writes) lines.write(stream, Buffer.from(text));
  lines.end();
  return Buffer.concat(out).toString();
}

describe('StreamLines', () => {
  it('leaves stdout as printed and marks every stderr line, interleaved in the order lines end', () => {
    expect(merge([['stdout', 'plain\nlines\n']])).toBe('plain\nlines\n');
    expect(
      merge([
        ['stdout', 'one\n'],
        ['stderr', 'bad\nworse\n'],
        ['stdout', 'two'],
        ['stderr', 'late'],
        ['stdout', ' halves\n'],
        ['stderr', ' error\n'],
      ]),
    ).toBe('one\n[stderr] bad\n[stderr] worse\ntwo halves\n[stderr] late error\n');
  });

  it('escapes a stdout line that starts like a mark, so no line can pass for the other stream', () => {
    expect(
      merge([
        ['stdout', '[stderr] fake\n[stdout] x\n'],
        ['stderr', '[stdout] real stderr\n'],
      ]),
    ).toBe('[stdout] [stderr] fake\n[stdout] [stdout] x\n[stderr] [stdout] real stderr\n');
  });

  it('keeps unfinished last lines of both streams, on lines of their own', () => {
    expect(
      merge([
        ['stdout', 'no newline'],
        ['stderr', 'nor here'],
      ]),
    ).toBe('no newline\n[stderr] nor here');
  });

  it('lets a long line out unfinished, and starts a new line only when the other stream prints', () => {
    expect(
      merge(
        [
          ['stdout', 'a'.repeat(20)],
          ['stdout', 'b'.repeat(20)],
        ],
        16,
      ),
    ).toBe('a'.repeat(20) + 'b'.repeat(20));
    expect(
      merge(
        [
          ['stderr', 'e'.repeat(20)],
          ['stdout', 'out\n'],
          ['stderr', 'tail\n'],
        ],
        16,
      ),
    ).toBe(`[stderr] ${'e'.repeat(20)}\nout\n[stderr] tail\n`);
  });

  it('never splits a multi-byte character across a mark', () => {
    const out: Buffer[] = [];
    const lines = new StreamLines((b) => out.push(Buffer.from(b)));
    const euro = Buffer.from('€\n');
    lines.write('stderr', euro.subarray(0, 1));
    lines.write('stdout', Buffer.from('x\n'));
    lines.write('stderr', euro.subarray(1));
    lines.end();
    expect(Buffer.concat(out).toString()).toBe('x\n[stderr] €\n');
  });
});
