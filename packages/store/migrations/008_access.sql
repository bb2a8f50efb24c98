-- 008: access control. The audit trail (one row per change made through the API or the dashboard, written in the
-- transaction of the change), dashboard sessions kept server-side, and the sign-in failures the per-address limit
-- counts. No key value is ever stored: sessions keep a fingerprint (HMAC-SHA256) of the key they were made with.

CREATE TABLE audit_log (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at         timestamptz NOT NULL DEFAULT now(),
  key_name   text NOT NULL,
  action     text NOT NULL,
  target     text NOT NULL,
  outcome    text NOT NULL CHECK (outcome IN ('ok', 'refused')),
  request_id text,
  source     text,
  -- {"field": {"old": ..., "new": ...}}, secrets masked before they get here.
  changes    jsonb
);
-- The filters of GET /audit, each with the keyset order (id DESC); retention deletes by id below a time's first id.
CREATE INDEX audit_log_key ON audit_log (key_name, id);
CREATE INDEX audit_log_action ON audit_log (action, id);
CREATE INDEX audit_log_target ON audit_log (target, id);
CREATE INDEX audit_log_at ON audit_log (at);

CREATE TABLE dashboard_sessions (
  -- SHA-256 of the cookie's token: a copy of this table cannot be used to sign in.
  token_hash      bytea PRIMARY KEY,
  key_name        text NOT NULL,
  key_fingerprint bytea NOT NULL,
  source          text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  last_seen_at    timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  ended_at        timestamptz
);
CREATE INDEX dashboard_sessions_live ON dashboard_sessions (expires_at) WHERE ended_at IS NULL;

-- One row per source address: failures in the current one-minute window.
CREATE TABLE sign_in_failures (
  source       text PRIMARY KEY,
  window_start timestamptz NOT NULL,
  failures     integer NOT NULL
);
