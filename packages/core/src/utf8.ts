/** @module utf8 — cutting byte buffers without splitting a UTF-8 character. */

/**
 * Length of `buffer` without a UTF-8 sequence cut off at its end.
 * @example completeUtf8End(Buffer.from('a€').subarray(0, 3)) // 1
 */
export function completeUtf8End(buffer: Uint8Array): number {
  for (let back = 1; back <= Math.min(4, buffer.length); back++) {
    const byte = buffer[buffer.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: look further back for the lead byte
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? buffer.length - back : buffer.length;
  }
  return buffer.length;
}
