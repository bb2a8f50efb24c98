import { describe, expect, it } from 'vitest';
import { keysetPageJson } from '../../packages/api/src/pagination';

/** The page as the byte cap defines it, row by row: rows while their JSON and a separator each fit, at least one. */
function reference(rows: { id: string; text: string }[], limit: number, maxBytes: number) {
  const kept: { id: string; text: string }[] = [];
  let bytes = 0;
  for (const row of rows.slice(0, limit)) {
    bytes += Buffer.byteLength(JSON.stringify(row)) + 1;
    if (bytes > maxBytes && kept.length > 0) break;
    kept.push(row);
  }
  return { data: kept, next_cursor: rows.length > kept.length ? kept[kept.length - 1]!.id : null };
}

describe('keysetPageJson', () => {
  it('cuts a page at the byte cap exactly where counting row by row cuts it, and keeps at least one row', async () => {
    for (let trial = 0; trial < 500; trial++) {
      const n = Math.floor(Math.random() * 12);
      const rows = Array.from({ length: n }, (_, i) => ({
        id: String(1000 - i),
        text: 'é"\n'.repeat(Math.floor(Math.random() * 40)),
      }));
      const limit = 1 + Math.floor(Math.random() * 10);
      const whole = Buffer.byteLength(JSON.stringify(rows.slice(0, limit)));
      // Around the boundaries that matter: the whole page's size, one byte either side, and anywhere below.
      for (const maxBytes of [whole - 2, whole - 1, whole, whole + 1, 1 + Math.floor(Math.random() * whole)]) {
        const page = await keysetPageJson(
          async (k) => rows.slice(0, k),
          limit,
          (r) => r,
          { maxBytes },
        );
        expect({ maxBytes, page: JSON.parse(new TextDecoder().decode(page.bytes)) }).toEqual({
          maxBytes,
          page: reference(rows, limit, maxBytes),
        });
      }
    }
  });
});
