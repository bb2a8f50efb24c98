-- 001: jobs, executions (one row per attempt) and workers.

CREATE TABLE jobs (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name                text NOT NULL,
  cron_expr           text,
  timezone            text NOT NULL DEFAULT 'UTC',
  run_at              timestamptz,
  command             text,
  handler             text,
  payload             jsonb,
  status              text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
  max_retries         integer NOT NULL DEFAULT 3 CHECK (max_retries >= 0),
  backoff_base_ms     integer NOT NULL DEFAULT 1000 CHECK (backoff_base_ms >= 0),
  backoff_factor      double precision NOT NULL DEFAULT 2 CHECK (backoff_factor >= 1),
  backoff_max_ms      integer NOT NULL DEFAULT 300000 CHECK (backoff_max_ms >= 0),
  backoff_jitter      text NOT NULL DEFAULT 'full' CHECK (backoff_jitter IN ('full', 'none')),
  timeout_ms          integer NOT NULL DEFAULT 300000 CHECK (timeout_ms > 0),
  overlap             text NOT NULL DEFAULT 'allow' CHECK (overlap IN ('allow', 'forbid', 'replace')),
  misfire             text NOT NULL DEFAULT 'run_once' CHECK (misfire IN ('skip', 'run_once', 'catch_up')),
  catch_up_max        integer NOT NULL DEFAULT 10 CHECK (catch_up_max >= 1),
  misfire_deadline_ms bigint CHECK (misfire_deadline_ms > 0),
  lane                text NOT NULL DEFAULT 'short' CHECK (lane IN ('short', 'long')),
  priority            integer NOT NULL DEFAULT 0 CHECK (priority BETWEEN -100 AND 100),
  next_run_at         timestamptz,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  deleted_at          timestamptz,
  CHECK (command IS NOT NULL OR handler IS NOT NULL),
  CHECK (cron_expr IS NULL OR run_at IS NULL)
);

-- Names are unique among live jobs; a deleted job's name can be reused while its history stays.
CREATE UNIQUE INDEX jobs_name_live ON jobs (name) WHERE deleted_at IS NULL;
-- The tick's only query over jobs: with nothing due it is one probe of this index, however many jobs exist.
CREATE INDEX jobs_due ON jobs (next_run_at) WHERE status = 'active' AND deleted_at IS NULL AND next_run_at IS NOT NULL;

CREATE TABLE executions (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- No foreign key: executions are only ever inserted by INSERT ... SELECT from a live job row, and jobs are never
  -- hard-deleted (soft delete keeps history). The per-row key check would cost bulk enqueue about a third.
  job_id           bigint NOT NULL,
  -- First execution of the attempt chain (null: this row is the first); retry_of: the attempt this one retries.
  root_id          bigint,
  retry_of         bigint,
  attempt          integer NOT NULL DEFAULT 1 CHECK (attempt >= 1),
  trigger          text NOT NULL CHECK (trigger IN ('cron', 'once', 'manual', 'retry', 'replay')),
  status           text NOT NULL CHECK (status IN ('queued', 'retrying', 'running', 'succeeded', 'failed', 'dead', 'cancelled', 'skipped')),
  lane             text NOT NULL,
  priority         integer NOT NULL DEFAULT 0,
  scheduled_for    timestamptz NOT NULL,
  payload          jsonb,
  idempotency_key  text,
  worker_id        text,
  lease_token      text,
  lease_expires_at timestamptz,
  queued_at        timestamptz NOT NULL DEFAULT now(),
  started_at       timestamptz,
  finished_at      timestamptz,
  exit_code        integer,
  output           text,
  error            text,
  duration_ms      integer
);

-- A fire time is materialised once, however many ticks race for it. A fire time cancelled before it ran (by a pause)
-- leaves the index, so resuming can materialise it again.
CREATE UNIQUE INDEX executions_fire_time ON executions (job_id, scheduled_for)
  WHERE trigger IN ('cron', 'once') AND status <> 'cancelled';
CREATE UNIQUE INDEX executions_idempotency ON executions (job_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- History of one job, newest first.
CREATE INDEX executions_job ON executions (job_id, id DESC);
-- Live rows only, so a long history never slows the reconciler, the stats or the dashboards. Keyed by id alone:
-- with status as a key column the planner, on fresh statistics, scans every live row of a status to find a batch.
CREATE INDEX executions_live ON executions (id) WHERE status IN ('queued', 'retrying', 'running');
-- The reaper's probe.
CREATE INDEX executions_lease ON executions (lease_expires_at) WHERE status = 'running';

CREATE TABLE workers (
  id                text PRIMARY KEY,
  kind              text NOT NULL,
  host              text NOT NULL,
  lanes             text[] NOT NULL,
  concurrency       integer NOT NULL,
  in_flight         integer NOT NULL DEFAULT 0,
  version           text NOT NULL,
  started_at        timestamptz NOT NULL,
  last_heartbeat_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workers_heartbeat ON workers (last_heartbeat_at);

-- Final statuses per minute, maintained by the statements that finish executions, so throughput, success rate and
-- 24-hour counts read at most 1,440 rows instead of counting millions of executions.
CREATE TABLE execution_minutes (
  minute      timestamptz NOT NULL,
  status      text NOT NULL,
  count       bigint NOT NULL,
  duration_ms bigint NOT NULL,
  PRIMARY KEY (minute, status)
);
