--[[
  push: makes executions deliverable, unless Redis already holds them anywhere (so a repeated push, or the
  reconciler pushing an id a worker holds, never duplicates it).
  Due now or earlier -> ready (scored by priority, then due time); later -> delayed (scored by due time). An attempt
  of a limited job (tagged) goes to fready instead of ready, and to delayed as "fpriority:id", and its tag is kept
  in F:items until it is acknowledged (see includes/flow.lua).

  KEYS[1] ready    zset  id -> (100 - priority) * 1e13 + (due ms - 1.7e12)
  KEYS[2] delayed  zset  "priority:id" or "fpriority:id" -> due ms
  KEYS[3] lease    zset  id -> lease expiry ms
  KEYS[4] marker   zset  one member; its presence wakes one blocked worker
  KEYS[5] fready   zset  like ready, for attempts of limited jobs
  KEYS[6] control  hash  paused:<lane> ("1": no worker is woken for this lane)
  KEYS[7] flow     the prefix of the flow keys
  ARGV[1] lane, then quadruples: id, priority, due ms, tag ("" or "job \t key")
  returns number of ids added
]]
-- @include flow.lua
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local F = KEYS[7]
local items, parked = F .. ':items', F .. ':parked'
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
local earliest = first[2] and tonumber(first[2]) or nil
local added, wake = 0, false
for i = 2, #ARGV, 4 do
  local id, priority, due, tag = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), ARGV[i + 3]
  local limited = tag ~= ''
  local tagged = redis.call('HEXISTS', items, id) == 1
  local present = redis.call('ZSCORE', KEYS[1], id) or redis.call('ZSCORE', KEYS[2], ARGV[i + 1] .. ':' .. id)
    or redis.call('ZSCORE', KEYS[3], id)
  -- Only an id Redis knows as limited can be in the flow sets.
  if not present and (tagged or limited) then
    present = redis.call('ZSCORE', KEYS[2], 'f' .. ARGV[i + 1] .. ':' .. id) or redis.call('ZSCORE', KEYS[5], id)
      or redis.call('HEXISTS', parked, id) == 1
  end
  if not present then
    if limited then
      local job, key = string.match(tag, '^([^\t]*)\t(.*)$')
      redis.call('HSET', items, id, job .. '\t' .. ARGV[1] .. '\t' .. key)
    elseif tagged then
      redis.call('HDEL', items, id)
    end
    if due <= now then
      redis.call('ZADD', limited and KEYS[5] or KEYS[1], (100 - priority) * 1e13 + (due - 1.7e12), id)
      wake = true
    else
      redis.call('ZADD', KEYS[2], due, (limited and 'f' or '') .. ARGV[i + 1] .. ':' .. id)
      if not earliest or due < earliest then
        earliest = due
        wake = true
      end
    end
    added = added + 1
  end
end
if wake and redis.call('HGET', KEYS[6], 'paused:' .. ARGV[1]) ~= '1' then redis.call('ZADD', KEYS[4], 0, 'm') end
return added
