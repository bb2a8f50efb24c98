/**
 * @module access-retention — one bounded pass deleting audit rows older than AUDIT_RETENTION and sessions long over,
 * in small batches so a year of history never becomes one long DELETE holding locks; run by every scheduler pass.
 */
import type { Store } from '@jobs/store';

const AUDIT_PRUNE_BATCH = 500;
/** Ended and expired sessions (and old sign-in failure windows) are kept this long, then deleted. */
const SESSION_KEEP_MS = 7 * 24 * 3_600_000;

export interface AccessPruneResult {
  audit: number;
  sessions: number;
}

/**
 * @example await pruneAccessOnce(ctx.store, { auditRetentionMs: config.auditRetentionMs, budgetMs: 500 })
 */
export async function pruneAccessOnce(
  store: Pick<Store, 'auditPrune' | 'sessionsPrune'>,
  options: { auditRetentionMs: number; budgetMs: number; batch?: number },
): Promise<AccessPruneResult> {
  const batch = options.batch ?? AUDIT_PRUNE_BATCH;
  const deadline = Date.now() + options.budgetMs;
  let audit = 0;
  for (;;) {
    const deleted = await store.auditPrune({ olderThanMs: options.auditRetentionMs, limit: batch });
    audit += deleted;
    if (deleted < batch || Date.now() >= deadline) break;
  }
  const sessions = await store.sessionsPrune({ olderThanMs: SESSION_KEEP_MS, limit: batch });
  return { audit, sessions };
}
