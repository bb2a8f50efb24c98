-- 004: jobs that change. A job's definition has a version (1 at creation, +1 on every real change); job_versions
-- keeps every version (what changed, old and new values, who changed it, when); an execution records the version it
-- started with. managed_by marks jobs that a jobs-as-code apply created, so --prune never deletes hand-made jobs.

ALTER TABLE jobs
  ADD COLUMN version    integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  ADD COLUMN managed_by text;

CREATE TABLE job_versions (
  job_id     bigint NOT NULL,
  version    integer NOT NULL,
  -- "api", "dashboard", or later the name of the API key that made the change.
  actor      text NOT NULL,
  -- [{ "field": ..., "old": ..., "new": ... }] in the API's field names and units; empty for version 1.
  changes    jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (job_id, version)
);

-- Jobs created before versions existed get their version 1 row, so every job's history starts somewhere.
INSERT INTO job_versions (job_id, version, actor, changes, created_at)
SELECT id, 1, 'migration', '[]'::jsonb, created_at FROM jobs;

ALTER TABLE executions ADD COLUMN job_version integer;

-- Backfilled fire times: one per (job, fire time), like cron fire times (a second backfill of a range adds nothing).
ALTER TABLE executions DROP CONSTRAINT executions_trigger_check;
ALTER TABLE executions ADD CONSTRAINT executions_trigger_check
  CHECK (trigger IN ('cron', 'once', 'manual', 'retry', 'replay', 'backfill'));
CREATE UNIQUE INDEX executions_backfill_time ON executions (job_id, scheduled_for)
  WHERE trigger = 'backfill' AND status <> 'cancelled';
