-- queue_flow_lock: flow admission, slot release and wake-ups serialise on this transaction lock (the Redis queue gets
-- the same from running one script at a time): a claim counting a job's slots and a settle freeing one can never miss
-- each other.
--
-- returns  void  once the lock is held, until the transaction ends
CREATE OR REPLACE FUNCTION queue_flow_lock() RETURNS void
LANGUAGE sql AS $$ SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.queue_flow')::bigint) $$;
