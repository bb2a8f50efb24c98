/**
 * @module pagination — keyset pages, newest first. The cursor is the id of the last row of the previous page, so a
 * page never shifts when rows are inserted meanwhile (new rows have larger ids and sort before it).
 *
 * A page also stops at PAGE_MAX_BYTES of JSON, whatever its rows hold: on Lambda a response over 6 MB fails as a
 * whole, and `limit` alone cannot bound it (a job's payload may be 64 KiB). The page then ends early, with a
 * `next_cursor` that continues right after its last row.
 */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** Most bytes of rows one page carries (as UTF-8 JSON); always at least one row. */
export const PAGE_MAX_BYTES = 1024 * 1024;

/**
 * Fetches one row more than asked, to know whether another page exists without returning an empty last page.
 * @example await keysetPage((n) => store.jobList({ before: cursor, limit: n }), 50, jobJson)
 */
export async function keysetPage<R extends { id: string }, T>(
  fetch: (limit: number) => Promise<R[]>,
  limit: number,
  toJson: (row: R) => T,
  options: { maxBytes?: number } = {},
): Promise<Page<T>> {
  const maxBytes = options.maxBytes ?? PAGE_MAX_BYTES;
  const rows = await fetch(limit + 1);
  const data: T[] = [];
  let bytes = 0;
  for (const row of rows.slice(0, limit)) {
    const item = toJson(row);
    bytes += Buffer.byteLength(JSON.stringify(item) ?? '') + 1;
    if (bytes > maxBytes && data.length > 0) break;
    data.push(item);
  }
  const more = rows.length > data.length;
  return { data, next_cursor: more ? rows[data.length - 1]!.id : null };
}
