-- 005: HTTP and Lambda job targets. A job has exactly one target: command, handler, http or lambda.
-- http:   {"url", "method", "headers": {name: value}, "body"?} (no "body" key: the execution's payload as JSON).
--         Header values are stored as given (secrets included); the API and dashboard mask them on the way out.
-- lambda: {"function", "qualifier"} (qualifier null: $LATEST / the unqualified function).

ALTER TABLE jobs
  ADD COLUMN http   jsonb CHECK (http IS NULL OR jsonb_typeof(http) = 'object'),
  ADD COLUMN lambda jsonb CHECK (lambda IS NULL OR jsonb_typeof(lambda) = 'object');

-- 001's unnamed "command or handler" check is replaced by "exactly one target" (found by its definition, since its
-- generated name depends on the order of 001's checks).
DO $$
DECLARE c text;
BEGIN
  SELECT conname INTO c FROM pg_constraint
  WHERE conrelid = 'jobs'::regclass AND contype = 'c'
    AND pg_get_constraintdef(oid) LIKE '%command IS NOT NULL%handler IS NOT NULL%';
  IF c IS NOT NULL THEN
    EXECUTE format('ALTER TABLE jobs DROP CONSTRAINT %I', c);
  END IF;
END $$;

ALTER TABLE jobs ADD CONSTRAINT jobs_one_target CHECK (num_nonnulls(command, handler, http, lambda) = 1);
