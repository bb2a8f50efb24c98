--[[
  reap: removes and returns leases that expired by the Redis clock. The caller asks PostgreSQL what each id is
  now: still waiting (claimed but never started) goes back to the queue; running is the database reaper's call.

  KEYS[1] lease   zset  id -> lease expiry ms
  KEYS[2] tokens  hash
  KEYS[3] deliveries hash  id -> times claimed (kept: the next claim adds to it)
  ARGV[1] limit
  returns { id1, deliveries1, id2, deliveries2, ... }
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local result = {}
for _, id in ipairs(expired) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  result[#result + 1] = id
  result[#result + 1] = redis.call('HGET', KEYS[3], id) or '0'
end
return result
