--[[
  settle: acknowledges finished claims and records dead ones in the dead-letter list. Only the holder of the
  current token can drop a lease, so a late worker cannot remove the lease of the claim that replaced it.
  Claims travel packed in one string each way: one argument instead of two per claim is much cheaper for the
  worker to send (ids are digits and tokens are base64url with a dot, so a space never occurs inside one).
  A claim of a limited job (its token has ".f") frees its slots, when its token is current or none is (Redis lost
  the lease, e.g. to a flush, or reaped it: then its slots were restored or freed already, and freeing is a no-op).

  KEYS[1] lease      zset
  KEYS[2] tokens     hash
  KEYS[3] dead       list  ids of dead executions, newest first (PostgreSQL keeps the full record)
  KEYS[4] deliveries hash
  KEYS[5] flow       the prefix of the flow keys (includes/flow.lua)
  ARGV[1] "id token id token ..." (the acknowledgements)
  ARGV[2] "id id ..." (the ids to dead-letter)
  ARGV[3] "id id ..." (finished attempts whose slots are freed whoever holds them: after a flow restore)
  returns number of leases dropped
]]
-- @include flow.lua
local F = KEYS[5]
local P = string.sub(F, 1, -6)
local dropped = 0
for id, token in string.gmatch(ARGV[1], '(%S+) (%S+)') do
  local current = redis.call('HGET', KEYS[2], id)
  if current == token then
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[4], id)
    redis.call('ZREM', KEYS[1], id)
    dropped = dropped + 1
  end
  if (current == token or not current) and string.find(token, '.f', 1, true) then
    flow_release(P, F, id)
    -- A current claim's id is nowhere else (a leased id is never pushed), so its tag goes too; without a current
    -- claim it may have been queued again (its lease was reaped), and keeps the tag then.
    if current == token then redis.call('HDEL', F .. ':items', id) else flow_forget(P, F, id) end
  end
end
for id in string.gmatch(ARGV[2], '%S+') do
  redis.call('LPUSH', KEYS[3], id)
end
for id in string.gmatch(ARGV[3], '%S+') do
  flow_release(P, F, id)
  flow_forget(P, F, id)
end
return dropped
