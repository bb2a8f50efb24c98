/** @module dashboard/lookups — small helpers shared by pages: a list's job names, id parameters. */

/** Names of the live jobs of a list read with `jobNames: true` (deleted ones are absent), from its rows. */
export function listJobNames(rows: readonly { jobId: string; jobName?: string | null }[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const r of rows) if (typeof r.jobName === 'string') names.set(r.jobId, r.jobName);
  return names;
}

const ID = /^[1-9][0-9]{0,17}$/;

/** A query parameter that must be an id; anything else counts as absent. */
export const idParam = (value: string | undefined) => (value && ID.test(value) ? value : undefined);
