/** @module dashboard/lookups — small reads shared by pages. */
import type { Store } from '@jobs/store';

/** Names of the live jobs among `jobIds` (deleted ones are absent), one indexed read per distinct job. */
export async function jobNames(store: Store, jobIds: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(jobIds)];
  const jobs = await Promise.all(unique.map((id) => store.jobGet(id)));
  const names = new Map<string, string>();
  for (const job of jobs) if (job) names.set(job.id, job.name);
  return names;
}

const ID = /^[1-9][0-9]{0,17}$/;

/** A query parameter that must be an id; anything else counts as absent. */
export const idParam = (value: string | undefined) => (value && ID.test(value) ? value : undefined);
