-- queue_channel: the LISTEN/NOTIFY channel of this schema (tests isolate by schema, so each deployment has its own).
-- The PostgreSQL counterpart of the Redis queue's marker keys.
--
-- kind     text  work: carries lane names (work may be ready there) | cancel: comma-separated execution ids to kill
-- returns  text  the channel name
CREATE OR REPLACE FUNCTION queue_channel(kind text) RETURNS text
LANGUAGE sql STABLE AS $$ SELECT 'jobs_' || kind || '_' || left(md5(current_schema()), 16) $$;
