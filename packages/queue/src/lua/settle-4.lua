--[[
  settle: acknowledges finished claims and records dead ones in the dead-letter list. Only the holder of the
  current token can drop a lease, so a late worker cannot remove the lease of the claim that replaced it.
  Claims travel packed in one string each way: one argument instead of two per claim is much cheaper for the
  worker to send (ids are digits and tokens are base64url with a dot, so a space never occurs inside one).

  KEYS[1] lease      zset
  KEYS[2] tokens     hash
  KEYS[3] dead       list  ids of dead executions, newest first (PostgreSQL keeps the full record)
  KEYS[4] deliveries hash
  ARGV[1] "id token id token ..." (the acknowledgements)
  ARGV[2] "id id ..." (the ids to dead-letter)
  returns number of leases dropped
]]
local dropped = 0
for id, token in string.gmatch(ARGV[1], '(%S+) (%S+)') do
  if redis.call('HGET', KEYS[2], id) == token then
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[4], id)
    redis.call('ZREM', KEYS[1], id)
    dropped = dropped + 1
  end
end
for id in string.gmatch(ARGV[2], '%S+') do
  redis.call('LPUSH', KEYS[3], id)
end
return dropped
