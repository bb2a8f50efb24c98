-- 009: the PostgreSQL queue (packages/queue-postgres, QUEUE_BACKEND=postgres): what Redis holds for the Redis queue
-- (ids, due times, leases, flow-control state), as tables and functions in the same database as the store. Created
-- on every deployment so there is one migration ledger; a deployment on Redis leaves them empty.
-- Its functions, the PostgreSQL counterparts of packages/queue/src/lua/*.lua, were defined here and now live in
-- packages/queue-postgres/sql, installed by migration 016 (docs/design.md, "Migrations"); nothing before 016 calls them.

CREATE TABLE queue_items (
  id               bigint PRIMARY KEY,   -- the execution id
  lane             text NOT NULL,
  priority         integer NOT NULL,
  due_at           timestamptz NOT NULL,
  -- delayed (not due yet) | ready | leased (claimed, lease_expires_at) | parked (held back by a limit: parked_on)
  -- | reaped (its lease expired; kept, with its delivery count, until pushed again or acknowledged)
  state            text NOT NULL,
  token            text,
  lease_expires_at timestamptz,
  -- Times claimed since it was first pushed: redeliveries after a crash are counted (reapOnce gives up at a cap).
  deliveries       integer NOT NULL DEFAULT 0,
  -- Set for an attempt of a job with limits: its job and concurrency key value. A leased row holds its slots.
  flow_job         bigint,
  flow_key         text,
  -- What a parked attempt waits for: c (a job slot), k (a key slot), r (its rate window, until wake_at), u (its
  -- job's limits, unknown to the queue until flowRestore copies them).
  parked_on        text,
  wake_at          timestamptz
) WITH (fillfactor = 80);
-- Every row changes state a few times in its short life: room on the page keeps the updates HOT where they can be.
CREATE INDEX queue_items_ready ON queue_items (lane, priority DESC, due_at, id) WHERE state = 'ready';
CREATE INDEX queue_items_limited_ready ON queue_items (lane) WHERE state = 'ready' AND flow_job IS NOT NULL;
CREATE INDEX queue_items_delayed ON queue_items (lane, due_at) WHERE state = 'delayed';
CREATE INDEX queue_items_leased ON queue_items (lane, lease_expires_at) WHERE state = 'leased';
CREATE INDEX queue_items_rate_parked ON queue_items (lane, wake_at) WHERE state = 'parked' AND parked_on = 'r';
CREATE INDEX queue_items_flow ON queue_items (flow_job, flow_key, state) WHERE flow_job IS NOT NULL;

-- Ids of dead executions, per lane (PostgreSQL's executions table keeps the record); newest = highest seq.
CREATE TABLE queue_dead (
  seq  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  lane text NOT NULL,
  id   bigint NOT NULL
);
CREATE INDEX queue_dead_lane ON queue_dead (lane, seq DESC);
CREATE INDEX queue_dead_id ON queue_dead (id);

-- The queue's copies of job limits and lane states (flowRestore writes them; a newer version only).
CREATE TABLE queue_flow_jobs (
  job_id          bigint PRIMARY KEY,
  max_concurrency integer,
  max_per_key     integer,
  rate_limit      integer,
  period_ms       integer,
  per_key         boolean NOT NULL DEFAULT false,
  version         numeric NOT NULL
);
CREATE TABLE queue_lanes (
  lane    text PRIMARY KEY,
  paused  boolean NOT NULL,
  version numeric NOT NULL
);
-- Starts within rate windows, per bucket (the job id, or "job:key" for a per-key limit).
CREATE TABLE queue_flow_starts (
  bucket     text NOT NULL,
  started_at timestamptz NOT NULL,
  token      text NOT NULL,
  PRIMARY KEY (bucket, started_at, token)
);
