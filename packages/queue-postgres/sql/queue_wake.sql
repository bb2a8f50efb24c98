-- queue_wake: sends attempts parked on a gate back to ready, first in claim order, and tells the workers of their lane.
--
-- p_job    bigint   the job whose attempts wait
-- p_key    text     only attempts of this key (NULL: any key)
-- p_gate   text     what they wait for: c (a job slot), k (a key slot), r (a rate window), u (unknown limits); NULL: any
-- p_n      integer  at most this many
-- returns  integer  how many were woken
CREATE OR REPLACE FUNCTION queue_wake(p_job bigint, p_key text, p_gate text, p_n integer) RETURNS integer
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
