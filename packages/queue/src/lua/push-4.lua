--[[
  push: makes executions deliverable, unless Redis already holds them anywhere (so a repeated push, or the
  reconciler pushing an id a worker holds, never duplicates it).
  Due now or earlier -> ready (scored by priority, then due time); later -> delayed (scored by due time).

  KEYS[1] ready    zset  id -> (100 - priority) * 1e13 + (due ms - 1.7e12)
  KEYS[2] delayed  zset  "priority:id" -> due ms
  KEYS[3] lease    zset  id -> lease expiry ms
  KEYS[4] marker   zset  one member; its presence wakes one blocked worker
  ARGV    triples: id, priority, due ms
  returns number of ids added
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
local earliest = first[2] and tonumber(first[2]) or nil
local added, wake = 0, false
for i = 1, #ARGV, 3 do
  local id, priority, due = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  local member = ARGV[i + 1] .. ':' .. id
  if not redis.call('ZSCORE', KEYS[1], id) and not redis.call('ZSCORE', KEYS[2], member)
      and not redis.call('ZSCORE', KEYS[3], id) then
    if due <= now then
      redis.call('ZADD', KEYS[1], (100 - priority) * 1e13 + (due - 1.7e12), id)
      wake = true
    else
      redis.call('ZADD', KEYS[2], due, member)
      if not earliest or due < earliest then
        earliest = due
        wake = true
      end
    end
    added = added + 1
  end
end
if wake then redis.call('ZADD', KEYS[4], 0, 'm') end
return added
