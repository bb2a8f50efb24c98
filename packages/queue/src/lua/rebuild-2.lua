--[[
  rebuild: copies what PostgreSQL knows into the flow state (includes/flow.lua). Lane states and job limits are
  written when newer than what Redis has (a job whose limits changed has its waiting attempts checked again);
  attempts parked because their job's limits were unknown go back to be checked. Slots, tags of running attempts
  and rate windows are written only by a full snapshot, and only while Redis has no flow state (never restored, or
  lost in a flush): the first restore after a loss wins, later ones leave the live counts alone.

  KEYS[1] control  hash  restored, paused:<lane>, pausedv:<lane>
  KEYS[2] flow     the prefix of the flow keys
  ARGV[1] "1": full snapshot; then, each list preceded by its length:
    lanes   (lane, paused "1"/"0", version)
    jobs    (job, c, k, r, p, pk, version), "" for none
    running (id, job, lane, key)
    starts  (bucket, start ms, member)
  returns 1 when slots were restored, else 0
]]
-- @include flow.lua
local F = KEYS[2]
local P = string.sub(F, 1, -6)
local i = 2
local function take(width)
  local n = tonumber(ARGV[i])
  local first = i + 1
  i = first + n * width
  return first, n
end

local first, n = take(3)
for j = first, first + (n - 1) * 3, 3 do
  local lane, paused, version = ARGV[j], ARGV[j + 1], tonumber(ARGV[j + 2])
  local current = tonumber(redis.call('HGET', KEYS[1], 'pausedv:' .. lane))
  if not current or version >= current then
    local was = redis.call('HGET', KEYS[1], 'paused:' .. lane)
    redis.call('HSET', KEYS[1], 'paused:' .. lane, paused, 'pausedv:' .. lane, ARGV[j + 2])
    if paused == '0' and was == '1' then redis.call('ZADD', P .. ':' .. lane .. ':marker', 0, 'm') end
  end
end

first, n = take(7)
local fields = { 'c', 'k', 'r', 'p', 'pk' }
for j = first, first + (n - 1) * 7, 7 do
  local job = ARGV[j]
  local jk = F .. ':job:' .. job
  local current = redis.call('HMGET', jk, 'v', 'c', 'k', 'r', 'p', 'pk')
  if not current[1] or tonumber(ARGV[j + 6]) > tonumber(current[1]) then
    local changed = false
    for f = 1, 5 do
      if (current[f + 1] or '') ~= ARGV[j + f] then changed = true end
    end
    redis.call('DEL', jk)
    redis.call('HSET', jk, 'v', ARGV[j + 6])
    for f = 1, 5 do
      if ARGV[j + f] ~= '' then redis.call('HSET', jk, fields[f], ARGV[j + f]) end
    end
    -- Waiting attempts are checked again under changed limits (raised limits must not leave them waiting); the
    -- same limits again (the reconciler repeats recent changes) leave them parked.
    if changed then
      for _, W in ipairs(redis.call('SMEMBERS', F .. ':waits:' .. job)) do
        flow_wake(P, F, W, job, redis.call('ZCARD', W))
      end
    end
  end
end

local unknown = redis.call('ZRANGE', F .. ':unknown', 0, 9999, 'WITHSCORES')
for j = 1, #unknown, 2 do
  local id = unknown[j]
  local desc = redis.call('HGET', F .. ':items', id)
  local job, lane = '', nil
  if desc then job, lane = flow_parse(desc) end
  if not desc or redis.call('EXISTS', F .. ':job:' .. job) == 1 then
    redis.call('ZREM', F .. ':unknown', id)
    redis.call('HDEL', F .. ':parked', id)
    if lane then
      redis.call('ZADD', P .. ':' .. lane .. ':fready', unknown[j + 1], id)
      redis.call('ZADD', P .. ':' .. lane .. ':marker', 0, 'm')
    end
  end
end

if ARGV[1] ~= '1' or redis.call('HEXISTS', KEYS[1], 'restored') == 1 then return 0 end
first, n = take(4)
for j = first, first + (n - 1) * 4, 4 do
  local id, job, lane, key = ARGV[j], ARGV[j + 1], ARGV[j + 2], ARGV[j + 3]
  redis.call('HSET', F .. ':items', id, job .. '\t' .. lane .. '\t' .. key)
  redis.call('SADD', F .. ':run:' .. job, id)
  if redis.call('HEXISTS', F .. ':job:' .. job, 'k') == 1 then redis.call('SADD', F .. ':runk:' .. job .. ':' .. key, id) end
end
first, n = take(3)
for j = first, first + (n - 1) * 3, 3 do
  redis.call('ZADD', F .. ':rate:' .. ARGV[j], ARGV[j + 1], ARGV[j + 2])
end
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], 'restored', t[1])
return 1
