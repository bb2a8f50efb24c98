/**
 * @module pagination — keyset pages, newest first. The cursor is the id of the last row of the previous page, so a
 * page never shifts when rows are inserted meanwhile (new rows have larger ids and sort before it).
 *
 * A page also stops at PAGE_MAX_BYTES of JSON, whatever its rows hold: on Lambda a response over 6 MB fails as a
 * whole, and `limit` alone cannot bound it (a job's payload may be 64 KiB). The page then ends early, with a
 * `next_cursor` that continues right after its last row.
 */
import type { Context, TypedResponse } from 'hono';

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** Most bytes of rows one page carries (as UTF-8 JSON); always at least one row. */
const PAGE_MAX_BYTES = 1024 * 1024;

/**
 * Fetches one row more than asked, to know whether another page exists without returning an empty last page.
 * `maxBytes: Infinity` for a page whose rows are bounded by construction and not sent as JSON (the dashboard's):
 * no row is serialized to be measured.
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
    if (maxBytes !== Infinity) {
      bytes += Buffer.byteLength(JSON.stringify(item) ?? '') + 1;
      if (bytes > maxBytes && data.length > 0) break;
    }
    data.push(item);
  }
  const more = rows.length > data.length;
  return { data, next_cursor: more ? rows[data.length - 1]!.id : null };
}

/** A page already serialized: its JSON as UTF-8 bytes (`T`: the row type it was made from, for the route's type). */
export interface PageJson<T> {
  bytes: Uint8Array<ArrayBuffer>;
  readonly rowType?: T;
}

const utf8 = new TextEncoder();

/**
 * keysetPage's page as the bytes of its JSON, for a route to send as they are (pageResponse): each row is
 * serialized once, and measured on the text that is sent, where keysetPage then c.json serialize every row twice.
 */
export async function keysetPageJson<R extends { id: string }, T>(
  fetch: (limit: number) => Promise<R[]>,
  limit: number,
  toJson: (row: R) => T,
  options: { maxBytes?: number } = {},
): Promise<PageJson<T>> {
  const maxBytes = options.maxBytes ?? PAGE_MAX_BYTES;
  const rows = await fetch(limit + 1);
  const items = rows.slice(0, limit).map(toJson);
  const whole = JSON.stringify(items);
  // The common case, a page within the cap, in one call: "[a,b]" is each row and its separator plus one byte, so
  // it fits exactly when the row by row count below would keep every row. Only a page over the cap is cut row by row.
  if (Buffer.byteLength(whole) - 1 <= maxBytes) {
    const next = rows.length > items.length ? JSON.stringify(rows[items.length - 1]!.id) : 'null';
    return { bytes: utf8.encode(`{"data":${whole},"next_cursor":${next}}`) };
  }
  const parts: string[] = [];
  let bytes = 0;
  for (const item of items) {
    const text = JSON.stringify(item);
    bytes += Buffer.byteLength(text) + 1;
    if (bytes > maxBytes && parts.length > 0) break;
    parts.push(text);
  }
  const next = rows.length > parts.length ? JSON.stringify(rows[parts.length - 1]!.id) : 'null';
  // Bytes, not a string: a Response made from a string first checks every character of it for lone surrogates.
  return { bytes: utf8.encode(`{"data":[${parts.join(',')}],"next_cursor":${next}}`) };
}

/** The 200 response of a serialized page, typed as c.json(page, 200) would be (the body is the same JSON). */
export function pageResponse<T>(c: Context, page: PageJson<T>): Response & TypedResponse<Page<T>, 200, 'json'> {
  return c.body(page.bytes, 200, { 'Content-Type': 'application/json' }) as unknown as Response &
    TypedResponse<Page<T>, 200, 'json'>;
}
