/**
 * @module pagination — keyset pages, newest first. The cursor is the id of the last row of the previous page, so a
 * page never shifts when rows are inserted meanwhile (new rows have larger ids and sort before it).
 */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/**
 * Fetches one row more than asked, to know whether another page exists without returning an empty last page.
 * @example await keysetPage((n) => store.jobList({ before: cursor, limit: n }), 50, jobJson)
 */
export async function keysetPage<R extends { id: string }, T>(
  fetch: (limit: number) => Promise<R[]>,
  limit: number,
  toJson: (row: R) => T,
): Promise<Page<T>> {
  const rows = await fetch(limit + 1);
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { data: page.map(toJson), next_cursor: more ? page[page.length - 1]!.id : null };
}
