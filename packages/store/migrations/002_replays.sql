-- 002: one replay per dead or failed execution. The replayed row keeps the id of the execution its replay created,
-- set by the same statement that inserts the replay, under the row's lock: concurrent replays make one chain.
ALTER TABLE executions ADD COLUMN replayed_by bigint;
