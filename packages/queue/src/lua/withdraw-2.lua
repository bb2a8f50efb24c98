--[[
  withdraw: drops cancelled executions that are still waiting (ready or delayed). Running ones keep their lease
  until their worker, told to stop, acknowledges.

  KEYS[1] ready    zset
  KEYS[2] delayed  zset  "priority:id"
  ARGV    pairs: id, priority
  returns number removed
]]
local removed = 0
for i = 1, #ARGV, 2 do
  removed = removed + redis.call('ZREM', KEYS[1], ARGV[i]) + redis.call('ZREM', KEYS[2], ARGV[i + 1] .. ':' .. ARGV[i])
end
return removed
