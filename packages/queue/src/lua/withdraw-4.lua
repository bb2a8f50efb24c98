--[[
  withdraw: drops cancelled executions that are still waiting (ready, delayed, or held back by flow control).
  Running ones keep their lease (and their slots) until their worker, told to stop, acknowledges.

  KEYS[1] ready    zset
  KEYS[2] delayed  zset  "priority:id" or "fpriority:id"
  KEYS[3] lease    zset
  KEYS[4] flow     the prefix of the flow keys (includes/flow.lua)
  ARGV[1] lane, then pairs: id, priority
  returns number removed
]]
-- @include flow.lua
local F = KEYS[4]
local P = string.sub(F, 1, -6)
local removed = 0
for i = 2, #ARGV, 2 do
  local id, priority = ARGV[i], ARGV[i + 1]
  removed = removed + redis.call('ZREM', KEYS[1], id) + redis.call('ZREM', KEYS[2], priority .. ':' .. id)
    + redis.call('ZREM', KEYS[2], 'f' .. priority .. ':' .. id) + flow_unpark(P, F, id, ARGV[1])
  if not redis.call('ZSCORE', KEYS[3], id) then redis.call('HDEL', F .. ':items', id) end
end
return removed
