import { describe, expect, it } from 'vitest';
import { CappedOutput } from './output';

describe('CappedOutput', () => {
  it('keeps everything under the limit', () => {
    const out = new CappedOutput(100);
    out.write('hello ');
    out.write(Buffer.from('world'));
    expect(out.toString()).toBe('hello world');
    expect(out.truncated).toBe(false);
  });

  it('keeps the head and the tail, and says how many bytes were dropped between them', () => {
    const out = new CappedOutput(20);
    out.write('HEAD-0123456789');
    for (let i = 0; i < 100; i++) out.write('middle ');
    out.write('the error: boom');
    const text = out.toString();
    expect(text.startsWith('HEAD-01234\n[… ')).toBe(true);
    expect(text.endsWith(' …]\nrror: boom')).toBe(true); // the last 10 bytes
    expect(text).toMatch(/\n\[… (\d+) bytes of output dropped …\]\n/);
    const dropped = Number(/… (\d+) bytes/.exec(text)![1]);
    expect(dropped).toBe(15 + 700 + 15 - 20);
    expect(out.truncated).toBe(true);
  });

  it('never cuts a UTF-8 character in two', () => {
    const out = new CappedOutput(10);
    out.write('aaaa€€€€€€€€€€bbb€'); // € is 3 bytes
    const text = out.toString();
    expect(text).not.toContain('\uFFFD');
    const [head, tail] = text.split(/\n\[… \d+ bytes of output dropped …\]\n/);
    expect(head).toBe('aaaa'); // 5 bytes of head: "aaaa" and the first byte of a €, which counts as dropped
    expect(tail).toBe('bb€'); // 5 bytes of tail: "b€" would be 4; the cut lands after a whole character
    const dropped = Number(/… (\d+) bytes/.exec(text)![1]);
    expect(dropped).toBe(Buffer.byteLength('aaaa€€€€€€€€€€bbb€') - Buffer.byteLength(head!) - Buffer.byteLength(tail!));
  });

  it('holds about the limit in memory however much is written, and hands every chunk to onChunk', () => {
    const seen: number[] = [];
    const out = new CappedOutput(1024, { onChunk: (c) => seen.push(c.length) });
    const chunk = Buffer.alloc(100, 'x');
    for (let i = 0; i < 10_000; i++) out.write(chunk);
    expect(seen.length).toBe(10_000);
    const held = (out as unknown as { tail: Buffer[] }).tail.reduce((n, b) => n + b.length, 0);
    expect(held).toBeLessThanOrEqual(512 + 100);
    expect(out.toString().length).toBeLessThan(1024 + 60);
  });
});
