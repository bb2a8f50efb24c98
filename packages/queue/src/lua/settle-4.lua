--[[
  settle: acknowledges finished claims and records dead ones in the dead-letter list. Only the holder of the
  current token can drop a lease, so a late worker cannot remove the lease of the claim that replaced it.

  KEYS[1] lease   zset
  KEYS[2] tokens  hash
  KEYS[3] dead    list  ids of dead executions, newest first (PostgreSQL keeps the full record)
  KEYS[4] deliveries hash
  ARGV[1] number of acks, then pairs: id, token; then the ids to dead-letter
  returns number of leases dropped
]]
local acks = tonumber(ARGV[1])
local dropped = 0
for i = 2, acks * 2, 2 do
  local id, token = ARGV[i], ARGV[i + 1]
  if redis.call('HGET', KEYS[2], id) == token then
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[4], id)
    redis.call('ZREM', KEYS[1], id)
    dropped = dropped + 1
  end
end
for i = acks * 2 + 2, #ARGV do
  redis.call('LPUSH', KEYS[3], ARGV[i])
end
return dropped
