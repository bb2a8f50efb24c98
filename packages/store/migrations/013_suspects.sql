-- 013: suspects. An attempt claimed before whose claim was never acknowledged (queue_items.deliveries > 0: its worker
-- was lost, and it may be a poison job that kills its worker) is claimed only by a worker with nothing in flight, as
-- the only claim of that call, and that worker claims nothing else while it runs: a poison job takes only itself down.
-- A busy worker's claim passes over a suspect; the first one to meet it takes the lane's turn (queue_suspect_turns)
-- and stops there, so one worker empties itself for it while the others go on. The Redis queue does the same in
-- packages/queue/src/lua/claim-10.lua. Claims go through queue_claim_for; queue_claim stays for workers of earlier
-- releases.

-- Ready suspects, per lane: a claim asks whether there are any (almost always none) before taking the fast path.
CREATE INDEX queue_items_suspects ON queue_items (lane) WHERE state = 'ready' AND deliveries > 0;

-- The worker whose turn it is to claim a suspect of the lane alone; a turn not kept lapses at expires_at.
CREATE TABLE queue_suspect_turns (
  lane       text PRIMARY KEY,
  worker     text NOT NULL,
  expires_at timestamptz NOT NULL
);

-- @include queue_claim_for.sql
