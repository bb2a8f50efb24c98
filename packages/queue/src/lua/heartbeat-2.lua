--[[
  heartbeat: extends leases held under the caller's tokens. A lease missing entirely (Redis was flushed or failed
  over) is restored, because PostgreSQL has just confirmed the caller still owns the attempt; a lease held under
  another token belongs to a newer claim and is left alone.

  KEYS[1] lease   zset  id -> lease expiry ms
  KEYS[2] tokens  hash  id -> token
  ARGV[1] lease ms, then pairs: id, token
  returns ids held by another token
]]
local t = redis.call('TIME')
local expiry = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
local lost = {}
for i = 2, #ARGV, 2 do
  local id, token = ARGV[i], ARGV[i + 1]
  local current = redis.call('HGET', KEYS[2], id)
  if current == token or not current then
    redis.call('HSET', KEYS[2], id, token)
    redis.call('ZADD', KEYS[1], expiry, id)
  else
    lost[#lost + 1] = id
  end
end
return lost
