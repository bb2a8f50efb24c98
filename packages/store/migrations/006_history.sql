-- 006: history with a lifetime. Per-job retention, and partial indexes for the final statuses that are rare, so a
-- list filtered by one of them reads its page and nothing else however long the history is (a filter on a status
-- with no rows at all used to walk the whole table). Succeeded rows get no index of their own: every recorded
-- outcome would pay an index insert for it, and most rows are succeeded, so their lists find a page at once.

-- Days a job's finished executions are kept (failed and dead ones: at least DEAD_RETENTION); 0 keeps them forever;
-- null follows HISTORY_RETENTION.
ALTER TABLE jobs ADD COLUMN retention_days integer CHECK (retention_days BETWEEN 0 AND 36500);

-- Status lists (`?status=dead`), newest first; the redundant predicate on the queries (status IN (...)) lets the
-- planner prove the index applies even to a generic plan.
CREATE INDEX executions_rare ON executions (status, id) WHERE status IN ('failed', 'dead', 'cancelled', 'skipped');
-- The same within one job (`?job_id=7&status=failed`).
CREATE INDEX executions_rare_job ON executions (job_id, status, id) WHERE status IN ('failed', 'dead', 'cancelled', 'skipped');

-- The attempt chain's forward links (retries and replays of an execution): only rows that retry or replay another
-- are in it, so the execution page reads its chain without walking the job's history.
CREATE INDEX executions_retry_of ON executions (retry_of) WHERE retry_of IS NOT NULL;
