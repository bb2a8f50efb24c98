-- queue_release: frees the slots of attempts that stopped holding them (acknowledged, reaped): each lets the first
-- attempt waiting for a job slot, and for a key slot, be checked again. The caller holds queue_flow_lock().
--
-- p_jobs   bigint[]  the job of each freed attempt
-- p_keys   text[]    its key (same order)
-- returns  void
CREATE OR REPLACE FUNCTION queue_release(p_jobs bigint[], p_keys text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  i integer;
BEGIN
  FOR i IN 1 .. coalesce(array_length(p_jobs, 1), 0) LOOP
    PERFORM queue_wake(p_jobs[i], NULL, 'c', 1);
    PERFORM queue_wake(p_jobs[i], p_keys[i], 'k', 1);
  END LOOP;
END $$;
