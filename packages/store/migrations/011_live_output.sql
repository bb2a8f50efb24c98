-- 011: live output of running attempts on the PostgreSQL queue (packages/queue-postgres/src/live-output.ts), what
-- the Redis queue keeps in a stream per execution. UNLOGGED: no WAL for text that only matters while an attempt runs
-- (a crash of the server empties it, as a Redis restart empties the streams; outcomes keep their output regardless).
-- Rows are trimmed to the newest writes per execution as they are written and deleted an hour after their write.
CREATE UNLOGGED TABLE live_output (
  execution_id bigint NOT NULL,
  seq          bigint GENERATED ALWAYS AS IDENTITY,
  text         text NOT NULL,
  written_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (execution_id, seq)
);
CREATE INDEX live_output_written ON live_output (written_at);
