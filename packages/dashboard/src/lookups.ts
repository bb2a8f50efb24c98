/** @module dashboard/lookups — small reads shared by pages. */
import type { Store } from '@jobs/store';

/** Names of the live jobs among `jobIds` (deleted ones are absent), in one read for the whole page. */
export function jobNames(store: Store, jobIds: readonly string[]): Promise<Map<string, string>> {
  return store.jobNames(jobIds, { live: true });
}

const ID = /^[1-9][0-9]{0,17}$/;

/** A query parameter that must be an id; anything else counts as absent. */
export const idParam = (value: string | undefined) => (value && ID.test(value) ? value : undefined);
