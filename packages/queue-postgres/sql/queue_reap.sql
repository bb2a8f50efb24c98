-- queue_reap: takes back leases that expired by the database clock (their worker is taken for dead) and frees their
-- slots (reap-4.lua). The rows stay, reaped, with their delivery counts: the caller pushes back the ids still waiting.
--
-- p_lane   text     the lane
-- p_limit  integer  at most this many
-- returns  rows (id, deliveries): the reaped attempts and how often each was delivered
CREATE OR REPLACE FUNCTION queue_reap(p_lane text, p_limit integer)
RETURNS TABLE (id bigint, deliveries integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_ids bigint[];
  v_deliveries integer[];
  v_jobs bigint[];
  v_keys text[];
BEGIN
  WITH r AS (
    UPDATE queue_items q SET state = 'reaped', token = NULL, lease_expires_at = NULL
    WHERE q.id IN (
      SELECT e.id FROM queue_items e
      WHERE e.lane = p_lane AND e.state = 'leased' AND e.lease_expires_at <= clock_timestamp()
      ORDER BY e.lease_expires_at LIMIT p_limit FOR UPDATE SKIP LOCKED)
    RETURNING q.id, q.deliveries, q.flow_job, q.flow_key)
  SELECT array_agg(r.id), array_agg(r.deliveries), array_agg(r.flow_job) FILTER (WHERE r.flow_job IS NOT NULL),
         array_agg(r.flow_key) FILTER (WHERE r.flow_job IS NOT NULL)
  INTO v_ids, v_deliveries, v_jobs, v_keys FROM r;
  IF v_jobs IS NOT NULL THEN
    PERFORM queue_flow_lock();
    PERFORM queue_release(v_jobs, v_keys);
  END IF;
  RETURN QUERY SELECT * FROM unnest(coalesce(v_ids, '{}'), coalesce(v_deliveries, '{}'));
END $$;
