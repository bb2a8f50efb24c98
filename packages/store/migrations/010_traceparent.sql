-- 010: the W3C trace context of the request that triggered an execution (retries keep their chain's): the parent of
-- its attempts' spans. Null for cron and one-off runs, which start their own trace, and whenever tracing is off.
-- (Part of the observability work of 007; a separate file because 007 had already landed.)
ALTER TABLE executions ADD COLUMN traceparent text;
