-- 022: alert channels, where alert messages go (docs/alerts.md). One row per channel, named; `config` holds the
-- kind's fields as the API takes them (webhook and slack: {"url"}; email: {"smtp": {...}, "from", "to"}; sns:
-- {"topic_arn"}), secrets included: the API and the dashboard mask them on the way out, and never log them.
CREATE TABLE alert_channels (
  name       text PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
  kind       text NOT NULL CHECK (kind IN ('webhook', 'slack', 'email', 'sns')),
  config     jsonb NOT NULL CHECK (jsonb_typeof(config) = 'object'),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
