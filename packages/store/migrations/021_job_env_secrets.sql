-- 021: what a job gets (#29). A command job's own variables (env: {NAME: "value" | {"secret": name}}; secret
-- references only name a secret), and named secrets kept encrypted (envelope encryption, AES-256-GCM):
--   value_sealed: the value under a data key of its own: iv (12 bytes) || tag (16) || ciphertext;
--   key_sealed:   that data key under the master key (SECRETS_KEY): iv || tag || encrypted key (32);
--   master_key:   which master key sealed key_sealed (the first 16 hex digits of its SHA-256), so a rotation
--                 re-encrypts exactly the rows sealed under an older one and a worker picks the key a row needs.
-- Nothing here ever holds a value in clear, and the API has no route that returns one.

ALTER TABLE jobs ADD COLUMN env jsonb CHECK (env IS NULL OR jsonb_typeof(env) = 'object');

CREATE TABLE secrets (
  name         text PRIMARY KEY,
  -- 1 at creation, +1 on every change of the value (a rotation of the master key keeps it).
  version      integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  value_sealed bytea NOT NULL,
  key_sealed   bytea NOT NULL,
  master_key   text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  created_by   text NOT NULL,
  updated_at   timestamptz NOT NULL DEFAULT now(),
  updated_by   text NOT NULL
);
