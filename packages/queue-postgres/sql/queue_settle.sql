-- queue_settle: acknowledges finished claims (only under the current token, so a late worker cannot drop the claim
-- that replaced its own; a reaped row of the id goes too), records dead ones in the dead-letter list, drops the leases
-- of p_release whoever holds them, then pushes the items given (retries, released attempts): one round trip, one
-- transaction (settle-5.lua). Freed slots wake their waiters.
--
-- p_ack_ids, p_ack_tokens  bigint[], text[]  the claims acknowledged, with their tokens
-- p_dead                   bigint[]          ids to dead-letter
-- p_lane                   text              the lane of the dead-letter list
-- p_release                bigint[]          finished attempts whose leases and slots go whoever holds them
-- p_push_*                 arrays            what to push, as queue_push's arguments
-- returns                  integer           how many leases were dropped
CREATE OR REPLACE FUNCTION queue_settle(p_ack_ids bigint[], p_ack_tokens text[], p_dead bigint[], p_lane text, p_release bigint[],
  p_push_ids bigint[], p_push_lanes text[], p_push_priorities integer[], p_push_due timestamptz[], p_push_jobs bigint[],
  p_push_keys text[])
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  v_jobs bigint[];
  v_keys text[];
  v_dropped integer;
BEGIN
  -- An acknowledgement a crash loses leaves a lease the reaper takes back (PostgreSQL's executions decide what then
  -- runs), and lost pushes are rebuilt by the reconciler: no synchronous commit needed (see queue_push).
  PERFORM set_config('synchronous_commit', 'off', true);
  WITH gone AS (
    DELETE FROM queue_items q USING unnest(p_ack_ids, p_ack_tokens) AS a(id, token)
    WHERE q.id = a.id AND (q.token = a.token OR q.state = 'reaped')
    RETURNING q.flow_job, q.flow_key, q.state),
  released AS (
    DELETE FROM queue_items q WHERE q.id = ANY (p_release) AND q.state IN ('leased', 'reaped')
    RETURNING q.flow_job, q.flow_key, q.state),
  freed AS (SELECT * FROM gone UNION ALL SELECT * FROM released)
  SELECT array_agg(f.flow_job) FILTER (WHERE f.flow_job IS NOT NULL AND f.state = 'leased'),
         array_agg(f.flow_key) FILTER (WHERE f.flow_job IS NOT NULL AND f.state = 'leased'),
         (SELECT count(*) FROM gone g WHERE g.state = 'leased')
  INTO v_jobs, v_keys, v_dropped FROM freed f;
  IF v_jobs IS NOT NULL THEN
    PERFORM queue_flow_lock();
    PERFORM queue_release(v_jobs, v_keys);
  END IF;
  IF coalesce(array_length(p_dead, 1), 0) > 0 THEN
    INSERT INTO queue_dead (lane, id) SELECT p_lane, d FROM unnest(p_dead) AS d;
  END IF;
  IF coalesce(array_length(p_push_ids, 1), 0) > 0 THEN
    PERFORM queue_push(p_push_ids, p_push_lanes, p_push_priorities, p_push_due, p_push_jobs, p_push_keys);
  END IF;
  RETURN v_dropped;
END $$;
