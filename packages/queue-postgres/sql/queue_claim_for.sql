-- queue_claim_for: queue_claim (the counterpart of claim-10.lua) for a worker, which says whether it has anything in
-- flight: a suspect (an attempt claimed before whose claim was never acknowledged, deliveries > 0: its worker was lost,
-- and it may be a poison job that kills its worker) is claimed only by an idle worker, as the only claim of the call.
-- A busy worker's claim passes over a suspect; the first one to meet it takes the lane's turn (queue_suspect_turns,
-- migration 013) and stops there, so one worker empties itself for it while the others go on.
--
-- p_lane      text     the lane
-- p_count     integer  at most this many claims; 0: only keep the caller's turn (see isolation)
-- p_lease_ms  integer  the lease's length (and the turn's)
-- p_token     text     the claim's token; each claim's is p_token || '.' || id
-- p_worker    text     the claiming worker ('': anonymous, never given a turn)
-- p_idle      boolean  the worker has nothing in flight: it may take a suspect
-- returns     rows (id, token, next_due, state, isolation): the claims, then one row with id NULL: the next due time
--             (delayed or rate window), the state (ok | paused | restore: some attempt's job limits are unknown, claims
--             went on) and the isolation: alone (the one id claimed is a suspect), turn (a suspect waits and this
--             worker is to take it: it claims nothing more until it is idle) or null
CREATE OR REPLACE FUNCTION queue_claim_for(p_lane text, p_count integer, p_lease_ms integer, p_token text, p_worker text,
  p_idle boolean)
RETURNS TABLE (id bigint, token text, next_due timestamptz, state text, isolation text)
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
  v_locked boolean := false;
  v_isolation text;
  v_turn integer;
BEGIN
  IF EXISTS (SELECT 1 FROM queue_lanes l WHERE l.lane = p_lane AND l.paused) THEN
    RETURN QUERY SELECT NULL::bigint, NULL::text, NULL::timestamptz, 'paused'::text, NULL::text;
    RETURN;
  END IF;
  IF p_count = 0 THEN
    UPDATE queue_suspect_turns t SET expires_at = v_expiry WHERE t.lane = p_lane AND t.worker = p_worker;
    v_isolation := CASE WHEN FOUND THEN 'turn' END;
    RETURN QUERY SELECT NULL::bigint, NULL::text, NULL::timestamptz, 'ok'::text, v_isolation;
    RETURN;
  END IF;
  -- An idle worker's turn has served: it meets the suspect now, and takes it or the turn again.
  IF p_idle THEN
    DELETE FROM queue_suspect_turns t WHERE t.lane = p_lane AND t.worker = p_worker;
  END IF;
  UPDATE queue_items q SET state = 'ready' WHERE q.id IN (
    SELECT d.id FROM queue_items d WHERE d.lane = p_lane AND d.state = 'delayed' AND d.due_at <= v_now
    ORDER BY d.due_at LIMIT 1000 FOR UPDATE SKIP LOCKED);
  UPDATE queue_items q SET state = 'ready', parked_on = NULL, wake_at = NULL WHERE q.id IN (
    SELECT w.id FROM queue_items w
    WHERE w.lane = p_lane AND w.state = 'parked' AND w.parked_on = 'r' AND w.wake_at <= v_now
    ORDER BY w.priority DESC, w.due_at, w.id LIMIT 100 FOR UPDATE SKIP LOCKED);

  IF EXISTS (SELECT 1 FROM queue_items f WHERE f.lane = p_lane AND f.state = 'ready' AND f.flow_job IS NOT NULL) THEN
    PERFORM queue_flow_lock();
    v_locked := true;
    -- Starts are dated after the wait for the lock: a claim that waited must not date its starts before the ones it
    -- waited for, or a rate window would open early.
    v_now := clock_timestamp();
  END IF;
  IF NOT v_locked
     AND NOT EXISTS (SELECT 1 FROM queue_items s WHERE s.lane = p_lane AND s.state = 'ready' AND s.deliveries > 0) THEN
    RETURN QUERY
      UPDATE queue_items q SET state = 'leased', token = p_token || '.' || q.id, lease_expires_at = v_expiry,
             deliveries = q.deliveries + 1
      WHERE q.id IN (
        -- flow_job IS NULL, deliveries = 0: an attempt of a limited job or a suspect made ready since the checks above
        -- (this statement sees what committed meanwhile) must still go through admission or isolation.
        SELECT c.id FROM queue_items c WHERE c.lane = p_lane AND c.state = 'ready' AND c.flow_job IS NULL
          AND c.deliveries = 0
        ORDER BY c.priority DESC, c.due_at, c.id LIMIT p_count FOR UPDATE SKIP LOCKED)
      RETURNING q.id, q.token, NULL::timestamptz, NULL::text, NULL::text;
    GET DIAGNOSTICS v_n = ROW_COUNT;
  ELSE
    -- Attempts looked at per call are bounded, so a crowd of limited ones never delays the others long.
    FOR r IN
      SELECT c.id, c.flow_job, c.flow_key, c.deliveries FROM queue_items c WHERE c.lane = p_lane AND c.state = 'ready'
      ORDER BY c.priority DESC, c.due_at, c.id LIMIT p_count + greatest(100, p_count * 4) FOR UPDATE SKIP LOCKED
    LOOP
      EXIT WHEN v_n >= p_count;
      IF r.deliveries > 0 AND NOT (p_idle AND v_n = 0) THEN
        -- A suspect this claim may not take: passed over, unless it is this worker's turn to empty itself for it.
        IF coalesce(p_worker, '') <> '' THEN
          INSERT INTO queue_suspect_turns AS t (lane, worker, expires_at) VALUES (p_lane, p_worker, v_expiry)
          ON CONFLICT (lane) DO UPDATE SET worker = excluded.worker, expires_at = excluded.expires_at
          WHERE t.worker = excluded.worker OR t.expires_at <= v_now;
          GET DIAGNOSTICS v_turn = ROW_COUNT;
          IF v_turn > 0 THEN
            v_isolation := 'turn';
            EXIT;
          END IF;
        END IF;
        CONTINUE;
      END IF;
      v_bucket := NULL;
      IF r.flow_job IS NOT NULL AND NOT v_locked THEN
        -- Made ready since the check above (claims with suspects only take the lock when they meet a limited job).
        PERFORM queue_flow_lock();
        v_locked := true;
        v_now := clock_timestamp();
      END IF;
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
      RETURN QUERY SELECT r.id, p_token || '.' || r.id, NULL::timestamptz, NULL::text, NULL::text;
      IF r.deliveries > 0 THEN
        v_isolation := 'alone';
        DELETE FROM queue_suspect_turns t WHERE t.lane = p_lane AND t.worker = p_worker;
        EXIT;
      END IF;
    END LOOP;
  END IF;

  -- More ready work: wake the other waiting workers too (NOTIFY is delivered at commit). Suspects wake nobody: only an
  -- idle worker may take one, and an idle worker looks again within its poll.
  IF EXISTS (SELECT 1 FROM queue_items c WHERE c.lane = p_lane AND c.state = 'ready' AND c.deliveries = 0) THEN
    PERFORM pg_notify(queue_channel('work'), p_lane);
  END IF;
  SELECT least(
    (SELECT min(d.due_at) FROM queue_items d WHERE d.lane = p_lane AND d.state = 'delayed'),
    (SELECT min(w.wake_at) FROM queue_items w WHERE w.lane = p_lane AND w.state = 'parked' AND w.parked_on = 'r'))
  INTO v_next;
  RETURN QUERY SELECT NULL::bigint, NULL::text, v_next, CASE WHEN v_unknown THEN 'restore' ELSE 'ok' END, v_isolation;
END $$;
