-- 012: the deliveries of an attempt. An attempt a worker gave back at shutdown (released) or lost before its start was
-- recorded (its claim expired in the queue) is delivered again as the same execution: each such earlier delivery is
-- kept here, oldest first, as {"worker_id", "started_at", "ended_at", "outcome": "released" | "lost"} (worker and
-- start unknown for a lost one). The current delivery is the row's own worker_id, started_at and finished_at. Null:
-- none before the current one (the common case costs nothing: only releases and redeliveries write it).
ALTER TABLE executions ADD COLUMN deliveries jsonb;
