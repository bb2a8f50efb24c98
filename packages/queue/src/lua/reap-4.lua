--[[
  reap: removes and returns leases that expired by the Redis clock, and frees the flow slots they held (their
  worker is taken for dead). The caller asks PostgreSQL what each id is now: still waiting (claimed but never
  started) goes back to the queue, where it takes a slot again; running is the database reaper's call.

  KEYS[1] lease   zset  id -> lease expiry ms
  KEYS[2] tokens  hash
  KEYS[3] deliveries hash  id -> times claimed (kept: the next claim adds to it)
  KEYS[4] flow    the prefix of the flow keys (includes/flow.lua)
  ARGV[1] limit
  returns { id1, deliveries1, id2, deliveries2, ... }
]]
-- @include flow.lua
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local F = KEYS[4]
local P = string.sub(F, 1, -6)
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local result = {}
for _, id in ipairs(expired) do
  local token = redis.call('HGET', KEYS[2], id)
  if token and string.find(token, '.f', 1, true) then flow_release(P, F, id) end
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  result[#result + 1] = id
  result[#result + 1] = redis.call('HGET', KEYS[3], id) or '0'
end
return result
