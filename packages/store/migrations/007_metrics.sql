-- 007: what the Prometheus series need from the roll-ups (packages/store/src/metrics.ts).
-- execution_minutes gets the lane and two histograms (attempt durations, and for cron and one-off runs the lateness
-- of their start), kept by the statements that already write it; execution_totals is the monotonic sum of the
-- minutes up to a watermark, which retention never touches, so jobs_attempts_finished_total never decreases.

-- Rows written before this migration have lane '' (unknown): the counters start at this migration.
ALTER TABLE execution_minutes
  ADD COLUMN lane            text NOT NULL DEFAULT '',
  -- Cumulative bucket counts (count of values <= each bound of DURATION_BOUNDS_MS in minutes.ts, then the count of
  -- all values); null when the statement measured none. The bounds are part of the schema: change them only with a
  -- migration that rewrites these arrays.
  ADD COLUMN duration_le     bigint[],
  ADD COLUMN lateness_ms     bigint NOT NULL DEFAULT 0,
  ADD COLUMN lateness_le     bigint[];
ALTER TABLE execution_minutes DROP CONSTRAINT execution_minutes_pkey;
ALTER TABLE execution_minutes ADD PRIMARY KEY (minute, status, lane);

-- Element-wise sum of two bucket arrays (null is "nothing measured"). IMMUTABLE and one expression, so it inlines.
CREATE FUNCTION buckets_add(a bigint[], b bigint[]) RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a
              ELSE ARRAY(SELECT x + y FROM unnest(a, b) AS u(x, y)) END
$$;

CREATE TABLE execution_totals (
  status      text NOT NULL,
  lane        text NOT NULL,
  count       bigint NOT NULL,
  duration_ms bigint NOT NULL,
  duration_le bigint[],
  lateness_ms bigint NOT NULL,
  lateness_le bigint[],
  PRIMARY KEY (status, lane)
);

-- One row: every minute up to and including folded_through is in execution_totals; later minutes are read live.
CREATE TABLE execution_totals_mark (
  id             boolean PRIMARY KEY DEFAULT true CHECK (id),
  folded_through timestamptz NOT NULL
);
INSERT INTO execution_totals_mark (folded_through) VALUES (date_trunc('minute', now()) - interval '1 minute');

-- Sums bucket arrays over rows (the fold and the scrape).
CREATE AGGREGATE buckets_sum(bigint[]) (SFUNC = buckets_add, STYPE = bigint[]);
