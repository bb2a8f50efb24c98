-- queue_claim: claims up to p_count ready attempts of a lane (promoting delayed ones that came due), highest priority
-- first, by the database clock (claim-10.lua without its suspects: workers of this release call queue_claim_for, and
-- this one stays for workers of earlier releases). Attempts of limited jobs are admitted one at a time
-- under queue_flow_lock(): their slots are the leased rows themselves, so counting is exact and nothing can drift; one
-- that cannot start is parked on what held it back and is not looked at again until a slot of it frees
-- (queue_release) or its window opens (wake_at).
--
-- p_lane      text     the lane
-- p_count     integer  at most this many claims
-- p_lease_ms  integer  the lease's length
-- p_token     text     the claim's token; each claim's is p_token || '.' || id
-- returns     rows (id, token, next_due, state): the claims, then one row with id NULL: the next due time (delayed or
--             rate window) and the state (ok | paused | restore: some attempt's job limits are unknown, claims went on)
CREATE OR REPLACE FUNCTION queue_claim(p_lane text, p_count integer, p_lease_ms integer, p_token text)
RETURNS TABLE (id bigint, token text, next_due timestamptz, state text)
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := clock_timestamp();
  v_expiry timestamptz := v_now + p_lease_ms * interval '1 millisecond';
  v_n integer := 0;
  v_unknown boolean := false;
  v_next timestamptz;
  r record;
  lim record;
  v_bucket text;
  v_c boolean; v_k boolean; v_r boolean;
  v_block text;
BEGIN
  IF EXISTS (SELECT 1 FROM queue_lanes l WHERE l.lane = p_lane AND l.paused) THEN
    RETURN QUERY SELECT NULL::bigint, NULL::text, NULL::timestamptz, 'paused'::text;
    RETURN;
  END IF;
  UPDATE queue_items q SET state = 'ready' WHERE q.id IN (
    SELECT d.id FROM queue_items d WHERE d.lane = p_lane AND d.state = 'delayed' AND d.due_at <= v_now
    ORDER BY d.due_at LIMIT 1000 FOR UPDATE SKIP LOCKED);
  UPDATE queue_items q SET state = 'ready', parked_on = NULL, wake_at = NULL WHERE q.id IN (
    SELECT w.id FROM queue_items w
    WHERE w.lane = p_lane AND w.state = 'parked' AND w.parked_on = 'r' AND w.wake_at <= v_now
    ORDER BY w.priority DESC, w.due_at, w.id LIMIT 100 FOR UPDATE SKIP LOCKED);

  IF NOT EXISTS (SELECT 1 FROM queue_items f WHERE f.lane = p_lane AND f.state = 'ready' AND f.flow_job IS NOT NULL) THEN
    RETURN QUERY
      UPDATE queue_items q SET state = 'leased', token = p_token || '.' || q.id, lease_expires_at = v_expiry,
             deliveries = q.deliveries + 1
      WHERE q.id IN (
        -- flow_job IS NULL: an attempt of a limited job made ready since the check above (this statement sees what
        -- committed meanwhile) must still go through admission.
        SELECT c.id FROM queue_items c WHERE c.lane = p_lane AND c.state = 'ready' AND c.flow_job IS NULL
        ORDER BY c.priority DESC, c.due_at, c.id LIMIT p_count FOR UPDATE SKIP LOCKED)
      RETURNING q.id, q.token, NULL::timestamptz, NULL::text;
    GET DIAGNOSTICS v_n = ROW_COUNT;
  ELSE
    PERFORM queue_flow_lock();
    -- Starts are dated after the wait for the lock: a claim that waited must not date its starts before the ones it
    -- waited for, or a rate window would open early.
    v_now := clock_timestamp();
    -- Attempts looked at per call are bounded, so a crowd of limited ones never delays the others long.
    FOR r IN
      SELECT c.id, c.flow_job, c.flow_key FROM queue_items c WHERE c.lane = p_lane AND c.state = 'ready'
      ORDER BY c.priority DESC, c.due_at, c.id LIMIT p_count + greatest(100, p_count * 4) FOR UPDATE SKIP LOCKED
    LOOP
      EXIT WHEN v_n >= p_count;
      v_bucket := NULL;
      IF r.flow_job IS NOT NULL THEN
        SELECT * INTO lim FROM queue_flow_jobs j WHERE j.job_id = r.flow_job;
        IF NOT FOUND THEN
          UPDATE queue_items q SET state = 'parked', parked_on = 'u' WHERE q.id = r.id;
          v_unknown := true;
          CONTINUE;
        END IF;
        v_k := lim.max_per_key IS NULL OR (SELECT count(*) FROM queue_items s
          WHERE s.flow_job = r.flow_job AND s.flow_key = r.flow_key AND s.state = 'leased') < lim.max_per_key;
        v_c := lim.max_concurrency IS NULL OR (SELECT count(*) FROM queue_items s
          WHERE s.flow_job = r.flow_job AND s.state = 'leased') < lim.max_concurrency;
        v_r := true;
        IF lim.rate_limit IS NOT NULL THEN
          v_bucket := CASE WHEN lim.per_key THEN r.flow_job || ':' || r.flow_key ELSE r.flow_job::text END;
          DELETE FROM queue_flow_starts s WHERE s.bucket = v_bucket AND s.started_at <= v_now - lim.period_ms * interval '1 millisecond';
          v_r := (SELECT count(*) FROM queue_flow_starts s WHERE s.bucket = v_bucket) < lim.rate_limit;
        END IF;
        IF NOT (v_k AND v_c AND v_r) THEN
          v_block := CASE WHEN NOT v_k THEN 'k' WHEN NOT v_c THEN 'c' ELSE 'r' END;
          UPDATE queue_items q SET state = 'parked', parked_on = v_block,
                 wake_at = CASE WHEN v_block = 'r' THEN (SELECT min(s.started_at) FROM queue_flow_starts s WHERE s.bucket = v_bucket)
                                                        + lim.period_ms * interval '1 millisecond' END
          WHERE q.id = r.id;
          -- The limits this attempt passed keep their room: the next attempt waiting for one of them may use it.
          IF v_k AND lim.max_per_key IS NOT NULL THEN PERFORM queue_wake(r.flow_job, r.flow_key, 'k', 1); END IF;
          IF v_c AND lim.max_concurrency IS NOT NULL THEN PERFORM queue_wake(r.flow_job, NULL, 'c', 1); END IF;
          CONTINUE;
        END IF;
      END IF;
      v_n := v_n + 1;
      UPDATE queue_items q SET state = 'leased', token = p_token || '.' || q.id, lease_expires_at = v_expiry,
             deliveries = q.deliveries + 1
      WHERE q.id = r.id;
      IF v_bucket IS NOT NULL THEN
        INSERT INTO queue_flow_starts (bucket, started_at, token) VALUES (v_bucket, v_now, p_token || '.' || r.id);
      END IF;
      RETURN QUERY SELECT r.id, p_token || '.' || r.id, NULL::timestamptz, NULL::text;
    END LOOP;
  END IF;

  -- More ready work: wake the other waiting workers too (NOTIFY is delivered at commit).
  IF EXISTS (SELECT 1 FROM queue_items c WHERE c.lane = p_lane AND c.state = 'ready') THEN
    PERFORM pg_notify(queue_channel('work'), p_lane);
  END IF;
  SELECT least(
    (SELECT min(d.due_at) FROM queue_items d WHERE d.lane = p_lane AND d.state = 'delayed'),
    (SELECT min(w.wake_at) FROM queue_items w WHERE w.lane = p_lane AND w.state = 'parked' AND w.parked_on = 'r'))
  INTO v_next;
  RETURN QUERY SELECT NULL::bigint, NULL::text, v_next, CASE WHEN v_unknown THEN 'restore' ELSE 'ok' END;
END $$;
