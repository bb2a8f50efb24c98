-- queue_push: makes executions deliverable unless the queue already holds them (a repeated push, or the reconciler
-- pushing an id a worker holds, never duplicates it); a reaped id comes back keeping its delivery count (push-7.lua).
--
-- p_ids         bigint[]       execution ids; the other arrays are in the same order
-- p_lanes       text[]         their lanes
-- p_priorities  integer[]      their priorities
-- p_due         timestamptz[]  when each is due (later than now: delayed)
-- p_jobs        bigint[]       the job of each attempt of a limited job (NULL: not limited)
-- p_keys        text[]         its concurrency key
-- returns       integer        how many were added
CREATE OR REPLACE FUNCTION queue_push(p_ids bigint[], p_lanes text[], p_priorities integer[], p_due timestamptz[], p_jobs bigint[], p_keys text[])
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := clock_timestamp();
  v_added integer;
  v_lanes text[];
  v_lane text;
BEGIN
  -- What a push writes is rebuilt from executions by the reconciler if a crash loses it (as after a Redis flush):
  -- it need not wait for its own WAL flush, which would be a second synchronous commit per trigger.
  PERFORM set_config('synchronous_commit', 'off', true);
  WITH input AS (
    SELECT DISTINCT ON (t.id) t.* FROM unnest(p_ids, p_lanes, p_priorities, p_due, p_jobs, p_keys)
      AS t(id, lane, priority, due_at, flow_job, flow_key)),
  added AS (
    INSERT INTO queue_items AS q (id, lane, priority, due_at, state, flow_job, flow_key)
    SELECT i.id, i.lane, i.priority, i.due_at, CASE WHEN i.due_at <= v_now THEN 'ready' ELSE 'delayed' END, i.flow_job, i.flow_key
    FROM input i
    -- Ids held in any other state are left out before the insert: ON CONFLICT DO UPDATE locks every conflicting row,
    -- updated or not, until commit, and claims skip locked rows. The reconciler pushes every waiting execution each
    -- pass, so ready rows would vanish from claims for the length of its push, with no wake-up after it.
    WHERE NOT EXISTS (SELECT 1 FROM queue_items h WHERE h.id = i.id AND h.state <> 'reaped')
    ON CONFLICT (id) DO UPDATE SET lane = excluded.lane, priority = excluded.priority, due_at = excluded.due_at,
      state = excluded.state, flow_job = excluded.flow_job, flow_key = excluded.flow_key, token = NULL,
      lease_expires_at = NULL, parked_on = NULL, wake_at = NULL
    WHERE q.state = 'reaped'
    RETURNING q.lane)
  SELECT count(*), array_agg(DISTINCT a.lane) INTO v_added, v_lanes FROM added a;
  FOREACH v_lane IN ARRAY coalesce(v_lanes, '{}') LOOP
    IF NOT EXISTS (SELECT 1 FROM queue_lanes l WHERE l.lane = v_lane AND l.paused) THEN
      PERFORM pg_notify(queue_channel('work'), v_lane);
    END IF;
  END LOOP;
  RETURN v_added;
END $$;
