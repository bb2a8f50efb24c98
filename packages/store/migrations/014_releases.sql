-- 014: releases. The deploy's migration step records the release it deploys (functions/migrate.ts) once the schema is
-- at the release's version; every worker names its release in its row, and learns with each heartbeat whether a newer
-- release is recorded whose workers already serve its lanes. A worker of an older release then stops claiming,
-- finishes what it runs (or hands it back at its shutdown grace) and exits: a deploy never waits on old workers that
-- keep taking work (docs/operations.md, "Releases").
CREATE TABLE releases (
  -- Recording order: a release is newer than every release recorded before it.
  seq            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  release        text NOT NULL UNIQUE CHECK (length(release) BETWEEN 1 AND 200),
  -- The newest migration applied when it was recorded.
  schema_version integer NOT NULL,
  recorded_at    timestamptz NOT NULL DEFAULT now()
);

-- The release a worker runs (null: a worker started without RELEASE_ID, which never retires for a release).
ALTER TABLE workers ADD COLUMN release text;
