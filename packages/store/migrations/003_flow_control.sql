-- 004: flow control. Per-job concurrency and rate limits, the concurrency key each waiting attempt was queued under,
-- and the lanes table (paused or not). Redis enforces the limits (packages/queue/src/lua/claim-9.lua); PostgreSQL
-- keeps what is needed to rebuild Redis's counters after it loses them.

ALTER TABLE jobs
  ADD COLUMN max_concurrency         integer CHECK (max_concurrency BETWEEN 1 AND 10000),
  -- The JSON Pointer as given (shown back to users) and parsed into a path for the #> operator.
  ADD COLUMN concurrency_key         text,
  ADD COLUMN concurrency_key_path    text[],
  ADD COLUMN max_concurrency_per_key integer CHECK (max_concurrency_per_key BETWEEN 1 AND 10000),
  ADD COLUMN rate_limit              integer CHECK (rate_limit BETWEEN 1 AND 10000),
  ADD COLUMN rate_period_ms          integer CHECK (rate_period_ms BETWEEN 1000 AND 86400000),
  ADD COLUMN rate_per_key            boolean NOT NULL DEFAULT false,
  ADD CONSTRAINT jobs_rate_complete CHECK ((rate_limit IS NULL) = (rate_period_ms IS NULL)),
  ADD CONSTRAINT jobs_key_complete CHECK ((concurrency_key IS NULL) = (concurrency_key_path IS NULL)),
  ADD CONSTRAINT jobs_key_used CHECK (
    (concurrency_key IS NULL AND max_concurrency_per_key IS NULL AND NOT rate_per_key)
    OR (concurrency_key IS NOT NULL AND (max_concurrency_per_key IS NOT NULL OR rate_per_key))),
  ADD COLUMN limited                 boolean GENERATED ALWAYS AS (
    max_concurrency IS NOT NULL OR max_concurrency_per_key IS NOT NULL OR rate_limit IS NOT NULL) STORED;

-- The concurrency key value of a payload: the JSON text of what the pointer selects ('' when the job has no key, or
-- the payload has nothing there or null: one shared value). Long values are replaced by their SHA-256 so Redis key
-- names stay short. IMMUTABLE and a single expression, so PostgreSQL inlines it into the statements that call it.
CREATE FUNCTION flow_key(payload jsonb, path text[]) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN path IS NULL THEN ''
    ELSE (SELECT CASE WHEN v IS NULL THEN '' WHEN octet_length(v) <= 200 THEN v
                      ELSE 'sha256:' || encode(sha256(convert_to(v, 'UTF8')), 'hex') END
          FROM (SELECT nullif((payload #> path)::text, 'null') AS v) x)
  END
$$;

-- Set when the attempt was created for a job with limits (null: unlimited): the key value its payload gave. It goes
-- to Redis with every push of the attempt, and the reconciler rebuilds Redis's counters from the running ones.
ALTER TABLE executions ADD COLUMN flow_key text;

CREATE TABLE lanes (
  lane       text PRIMARY KEY,
  paused     boolean NOT NULL DEFAULT false,
  -- Bumped by every change, so a slow copy to Redis can never overwrite a newer one.
  version    bigint NOT NULL DEFAULT 0,
  paused_at  timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO lanes (lane) VALUES ('short'), ('long');
