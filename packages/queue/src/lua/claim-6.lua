--[[
  claim: promotes delayed ids that came due, then leases up to `count` ready ids, highest priority first.
  Uses the Redis clock, so workers with skewed clocks agree on what is due and when a lease ends.

  KEYS[1] ready    zset
  KEYS[2] delayed  zset  "priority:id" -> due ms
  KEYS[3] lease    zset  id -> lease expiry ms
  KEYS[4] tokens   hash  id -> lease token of the current claim
  KEYS[5] marker   zset
  KEYS[6] deliveries hash id -> times claimed since its last acknowledgement (redeliveries of a crash are counted)
  ARGV[1] count, ARGV[2] lease ms, ARGV[3] token prefix (unique per call), ARGV[4] promote limit
  returns { next delayed due ms or "-1", id1, token1, id2, token2, ... }
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[4]))
for i = 1, #due, 2 do
  local member = due[i]
  local sep = string.find(member, ':', 1, true)
  local priority = tonumber(string.sub(member, 1, sep - 1))
  local id = string.sub(member, sep + 1)
  if not redis.call('ZSCORE', KEYS[3], id) then
    redis.call('ZADD', KEYS[1], (100 - priority) * 1e13 + (tonumber(due[i + 1]) - 1.7e12), id)
  end
  redis.call('ZREM', KEYS[2], member)
end
local popped = redis.call('ZPOPMIN', KEYS[1], tonumber(ARGV[1]))
local expiry = now + tonumber(ARGV[2])
local result = { '-1' }
local n = 0
for i = 1, #popped, 2 do
  local id = popped[i]
  n = n + 1
  local token = ARGV[3] .. '.' .. n
  redis.call('HSET', KEYS[4], id, token)
  redis.call('HINCRBY', KEYS[6], id, 1)
  redis.call('ZADD', KEYS[3], expiry, id)
  result[#result + 1] = id
  result[#result + 1] = token
end
-- More ready work: wake the next blocked worker too. None: drop a marker left by pushes of ids this call took, so
-- no worker wakes for an empty claim (the caller gets the next delayed due time below and waits for it).
if redis.call('ZCARD', KEYS[1]) > 0 then redis.call('ZADD', KEYS[5], 0, 'm') else redis.call('ZREM', KEYS[5], 'm') end
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if first[2] then result[1] = first[2] end
return result
