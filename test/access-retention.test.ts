/** AUDIT_RETENTION: the scheduler pass deletes audit rows older than the retention, in batches, and old sessions. */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { pruneAccessOnce } from '../functions/access-retention';
import { createTestEnv, type TestEnv } from './support/env';

let env: TestEnv;
beforeEach(async () => {
  env = await createTestEnv('retention');
});
afterEach(async () => {
  await env.cleanup();
});

it('deletes audit rows past the retention in batches, keeps the rest, and drops long-ended sessions', async () => {
  const entry = {
    keyName: 'ci',
    requestId: null,
    source: null,
    action: 'job.trigger' as const,
    target: 'job:1',
    outcome: 'ok' as const,
    changes: null,
  };
  for (let i = 0; i < 7; i++) await env.store.auditInsert(entry);
  await env.store.auditInsert({ ...entry, target: 'job:2' });
  await env.pool.query(`UPDATE audit_log SET at = now() - interval '400 days' WHERE target = 'job:1'`);
  await env.pool.query(
    `INSERT INTO dashboard_sessions (token_hash, key_name, key_fingerprint, expires_at, ended_at)
     VALUES ('\\x01', 'ci', '\\x02', now() - interval '30 days', NULL), ('\\x03', 'ci', '\\x04', now() + interval '1 hour', NULL)`,
  );

  const pruned = await pruneAccessOnce(env.store, { auditRetentionMs: 365 * 86_400_000, budgetMs: 5_000, batch: 3 });
  expect(pruned).toEqual({ audit: 7, sessions: 1 });
  const { rows } = await env.pool.query('SELECT target FROM audit_log');
  expect(rows).toEqual([{ target: 'job:2' }]);
  expect((await env.pool.query('SELECT count(*)::int AS n FROM dashboard_sessions')).rows[0].n).toBe(1);

  // Out of time budget: one batch, the rest next pass.
  for (let i = 0; i < 5; i++) await env.store.auditInsert(entry);
  await env.pool.query(`UPDATE audit_log SET at = now() - interval '400 days' WHERE target = 'job:1'`);
  expect((await pruneAccessOnce(env.store, { auditRetentionMs: 365 * 86_400_000, budgetMs: 0, batch: 2 })).audit).toBe(
    2,
  );
});
