-- 009: the PostgreSQL queue (packages/queue-postgres, QUEUE_BACKEND=postgres): what Redis holds for the Redis queue
-- (ids, due times, leases, flow-control state), as tables and functions in the same database as the store. Created
-- on every deployment so there is one migration ledger; a deployment on Redis leaves them empty.
-- The functions are the PostgreSQL counterparts of packages/queue/src/lua/*.lua; semantics in packages/core/src/flow.ts.

CREATE TABLE queue_items (
  id               bigint PRIMARY KEY,   -- the execution id
  lane             text NOT NULL,
  priority         integer NOT NULL,
  due_at           timestamptz NOT NULL,
  -- delayed (not due yet) | ready | leased (claimed, lease_expires_at) | parked (held back by a limit: parked_on)
  -- | reaped (its lease expired; kept, with its delivery count, until pushed again or acknowledged)
  state            text NOT NULL,
  token            text,
  lease_expires_at timestamptz,
  -- Times claimed since it was first pushed: redeliveries after a crash are counted (reapOnce gives up at a cap).
  deliveries       integer NOT NULL DEFAULT 0,
  -- Set for an attempt of a job with limits: its job and concurrency key value. A leased row holds its slots.
  flow_job         bigint,
  flow_key         text,
  -- What a parked attempt waits for: c (a job slot), k (a key slot), r (its rate window, until wake_at), u (its
  -- job's limits, unknown to the queue until flowRestore copies them).
  parked_on        text,
  wake_at          timestamptz
) WITH (fillfactor = 80);
-- Every row changes state a few times in its short life: room on the page keeps the updates HOT where they can be.
CREATE INDEX queue_items_ready ON queue_items (lane, priority DESC, due_at, id) WHERE state = 'ready';
CREATE INDEX queue_items_limited_ready ON queue_items (lane) WHERE state = 'ready' AND flow_job IS NOT NULL;
CREATE INDEX queue_items_delayed ON queue_items (lane, due_at) WHERE state = 'delayed';
CREATE INDEX queue_items_leased ON queue_items (lane, lease_expires_at) WHERE state = 'leased';
CREATE INDEX queue_items_rate_parked ON queue_items (lane, wake_at) WHERE state = 'parked' AND parked_on = 'r';
CREATE INDEX queue_items_flow ON queue_items (flow_job, flow_key, state) WHERE flow_job IS NOT NULL;

-- Ids of dead executions, per lane (PostgreSQL's executions table keeps the record); newest = highest seq.
CREATE TABLE queue_dead (
  seq  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  lane text NOT NULL,
  id   bigint NOT NULL
);
CREATE INDEX queue_dead_lane ON queue_dead (lane, seq DESC);
CREATE INDEX queue_dead_id ON queue_dead (id);

-- The queue's copies of job limits and lane states (flowRestore writes them; a newer version only).
CREATE TABLE queue_flow_jobs (
  job_id          bigint PRIMARY KEY,
  max_concurrency integer,
  max_per_key     integer,
  rate_limit      integer,
  period_ms       integer,
  per_key         boolean NOT NULL DEFAULT false,
  version         numeric NOT NULL
);
CREATE TABLE queue_lanes (
  lane    text PRIMARY KEY,
  paused  boolean NOT NULL,
  version numeric NOT NULL
);
-- Starts within rate windows, per bucket (the job id, or "job:key" for a per-key limit).
CREATE TABLE queue_flow_starts (
  bucket     text NOT NULL,
  started_at timestamptz NOT NULL,
  token      text NOT NULL,
  PRIMARY KEY (bucket, started_at, token)
);

-- The LISTEN/NOTIFY channel of this schema (tests isolate by schema, so each deployment has its own): `work` carries
-- lane names (work may be ready there), `cancel` carries comma-separated execution ids to kill.
CREATE FUNCTION queue_channel(kind text) RETURNS text
LANGUAGE sql STABLE AS $$ SELECT 'jobs_' || kind || '_' || left(md5(current_schema()), 16) $$;

-- Flow admission, slot release and wake-ups serialise on this transaction lock (the Redis queue gets the same from
-- running one script at a time): a claim counting a job's slots and a settle freeing one can never miss each other.
CREATE FUNCTION queue_flow_lock() RETURNS void
LANGUAGE sql AS $$ SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.queue_flow')::bigint) $$;

-- Sends up to n attempts parked on `gate` (of a job, and of a key when given) back to ready, first in claim order.
CREATE FUNCTION queue_wake(p_job bigint, p_key text, p_gate text, p_n integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  woken integer;
  woken_lane text;
BEGIN
  IF p_n <= 0 THEN RETURN 0; END IF;
  WITH w AS (
    UPDATE queue_items q SET state = 'ready', parked_on = NULL, wake_at = NULL
    WHERE q.id IN (
      SELECT p.id FROM queue_items p
      WHERE p.flow_job = p_job AND p.state = 'parked' AND (p_gate IS NULL OR p.parked_on = p_gate)
        AND (p_key IS NULL OR p.flow_key = p_key)
      ORDER BY p.priority DESC, p.due_at, p.id LIMIT p_n FOR UPDATE SKIP LOCKED)
    RETURNING q.lane)
  SELECT count(*), min(w.lane) INTO woken, woken_lane FROM w;
  IF woken > 0 THEN PERFORM pg_notify(queue_channel('work'), woken_lane); END IF;
  RETURN woken;
END $$;

-- Frees the slots of attempts that stopped holding them (acknowledged, reaped): each lets the first attempt waiting
-- for a job slot, and for a key slot, be checked again. The caller holds queue_flow_lock().
CREATE FUNCTION queue_release(p_jobs bigint[], p_keys text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  i integer;
BEGIN
  FOR i IN 1 .. coalesce(array_length(p_jobs, 1), 0) LOOP
    PERFORM queue_wake(p_jobs[i], NULL, 'c', 1);
    PERFORM queue_wake(p_jobs[i], p_keys[i], 'k', 1);
  END LOOP;
END $$;

-- Claims up to p_count ready attempts of a lane (promoting delayed ones that came due), highest priority first, by
-- the database clock. Attempts of limited jobs are admitted one at a time under queue_flow_lock(): their slots are
-- the leased rows themselves, so counting is exact and nothing can drift; one that cannot start is parked on what
-- held it back and is not looked at again until a slot of it frees (queue_release) or its window opens (wake_at).
-- Returns the claims, then one row with id NULL: the next due time (delayed or rate window) and the state
-- (ok | paused | restore: some attempt's job limits are unknown, claims went on).
CREATE FUNCTION queue_claim(p_lane text, p_count integer, p_lease_ms integer, p_token text)
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

-- Makes executions deliverable unless the queue already holds them (a repeated push, or the reconciler pushing an id
-- a worker holds, never duplicates it); a reaped id comes back keeping its delivery count. Returns how many were added.
CREATE FUNCTION queue_push(p_ids bigint[], p_lanes text[], p_priorities integer[], p_due timestamptz[], p_jobs bigint[], p_keys text[])
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

-- Acknowledges finished claims (only under the current token, so a late worker cannot drop the claim that replaced
-- its own; a reaped row of the id goes too), records dead ones in the dead-letter list, drops the leases of
-- `p_release` whoever holds them, then pushes the items given (retries, released attempts): one round trip, one
-- transaction. Freed slots wake their waiters. Returns how many leases were dropped.
CREATE FUNCTION queue_settle(p_ack_ids bigint[], p_ack_tokens text[], p_dead bigint[], p_lane text, p_release bigint[],
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

-- Takes back leases that expired by the database clock (their worker is taken for dead) and frees their slots. The
-- rows stay, reaped, with their delivery counts: the caller pushes back the ids still waiting.
CREATE FUNCTION queue_reap(p_lane text, p_limit integer)
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
