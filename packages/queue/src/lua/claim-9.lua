--[[
  claim: promotes delayed ids that came due, then leases up to `count` ids that may start, highest priority first.
  Uses the Redis clock, so workers with skewed clocks agree on what is due, when a lease ends and when a rate
  window opens. Attempts of jobs without limits come from the ready set at no extra cost while no attempt of a
  limited job is ready; attempts of limited jobs come from fready, merged by score, and start only if every limit of
  their job allows it (see includes/flow.lua for the keys): their slots are taken here, atomically. One that cannot
  start is parked in the waiting set of what held it back and is not looked at again until a slot of it frees
  (settle, reap) or its rate window opens (F:timers, fired here).

  KEYS[1] ready    zset  id -> (100 - priority) * 1e13 + (due ms - 1.7e12)
  KEYS[2] delayed  zset  "priority:id" (or "fpriority:id" for an attempt of a limited job) -> due ms
  KEYS[3] lease    zset  id -> lease expiry ms
  KEYS[4] tokens   hash  id -> lease token of the current claim
  KEYS[5] marker   zset
  KEYS[6] deliveries hash id -> times claimed since its last acknowledgement (redeliveries of a crash are counted)
  KEYS[7] fready   zset  attempts of limited jobs ready to be checked, scored like ready
  KEYS[8] control  hash  restored (flow state known), paused:<lane> ("1": the lane starts nothing)
  KEYS[9] flow     the prefix of the flow keys (includes/flow.lua)
  ARGV[1] count, ARGV[2] lease ms, ARGV[3] token prefix (unique per call), ARGV[4] promote limit, ARGV[5] lane
  returns { next due ms (delayed id or rate window) or "-1", "ok" | "paused" | "restore", id1, token1, ... }
    "restore": the flow state is lost (nothing is claimed), or an attempt's job limits are unknown (claims go on)
]]
-- @include flow.lua
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local control = redis.call('HMGET', KEYS[8], 'restored', 'paused:' .. ARGV[5])
if not control[1] then return { '-1', 'restore' } end
if control[2] == '1' then
  -- Nothing starts; no marker either, so waiting workers are not woken for this lane until it resumes.
  redis.call('ZREM', KEYS[5], 'm')
  return { '-1', 'paused' }
end
local F = KEYS[9]
local P = string.sub(F, 1, -6)

local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[4]))
for i = 1, #due, 2 do
  local member = due[i]
  local limited = string.byte(member, 1) == 102 -- "f"
  local sep = string.find(member, ':', 1, true)
  local priority = tonumber(string.sub(member, limited and 2 or 1, sep - 1))
  local id = string.sub(member, sep + 1)
  if not redis.call('ZSCORE', KEYS[3], id) then
    redis.call('ZADD', limited and KEYS[7] or KEYS[1], (100 - priority) * 1e13 + (tonumber(due[i + 1]) - 1.7e12), id)
  end
  redis.call('ZREM', KEYS[2], member)
end

-- Arms the timer of a rate bucket for when its window next has room (the earliest arming wins).
local function arm(job, bucket, win, period)
  local first = redis.call('ZRANGE', win, 0, 0, 'WITHSCORES')
  local open = (first[2] and tonumber(first[2]) or now) + period
  redis.call('ZADD', F .. ':timers', 'LT', open, job .. '\t' .. bucket)
end

-- Rate windows that opened: as many of their waiters as there is room for go back to be checked.
local timers = redis.call('ZRANGEBYSCORE', F .. ':timers', '-inf', now, 'LIMIT', 0, 20)
for _, member in ipairs(timers) do
  redis.call('ZREM', F .. ':timers', member)
  local job, bucket = string.match(member, '^([^\t]*)\t(.*)$')
  local W = F .. ':wr:' .. bucket
  local lim = redis.call('HMGET', F .. ':job:' .. job, 'r', 'p')
  local r, period = tonumber(lim[1]), tonumber(lim[2])
  if not r then
    flow_wake(P, F, W, job, redis.call('ZCARD', W))
  else
    local win = F .. ':rate:' .. bucket
    redis.call('ZREMRANGEBYSCORE', win, '-inf', now - period)
    flow_wake(P, F, W, job, r - redis.call('ZCARD', win))
    if redis.call('EXISTS', W) == 1 then arm(job, bucket, win, period) end
  end
end

local unknown = false
-- Checks attempt `id` of a limited job against its limits. Returns true with its rate window (or false) when it may
-- start (its concurrency slots are taken), nil when it was parked.
local function admit(id, score)
  local desc = redis.call('HGET', F .. ':items', id)
  if not desc then return true, false end
  local job, _, key = flow_parse(desc)
  local jk = F .. ':job:' .. job
  local lim = redis.call('HMGET', jk, 'c', 'k', 'r', 'p', 'pk')
  local c, k, r = tonumber(lim[1]), tonumber(lim[2]), tonumber(lim[3])
  if not c and not k and not r and redis.call('EXISTS', jk) == 0 then
    redis.call('ZADD', F .. ':unknown', score, id)
    redis.call('HSET', F .. ':parked', id, F .. ':unknown')
    unknown = true
    return nil
  end
  local gates = {}
  if k then gates[#gates + 1] = { set = F .. ':runk:' .. job .. ':' .. key, wait = F .. ':wk:' .. job .. ':' .. key, limit = k } end
  if c then gates[#gates + 1] = { set = F .. ':run:' .. job, wait = F .. ':wc:' .. job, limit = c } end
  local win = false
  if r then
    local period = tonumber(lim[4])
    local bucket = lim[5] == '1' and (job .. ':' .. key) or job
    win = F .. ':rate:' .. bucket
    redis.call('ZREMRANGEBYSCORE', win, '-inf', now - period)
    gates[#gates + 1] = { win = win, wait = F .. ':wr:' .. bucket, limit = r, bucket = bucket, period = period }
  end
  local blocked = nil
  for _, g in ipairs(gates) do
    g.free = (g.win and redis.call('ZCARD', g.win) or redis.call('SCARD', g.set)) < g.limit
    if not g.free and not blocked then blocked = g end
  end
  if not blocked then
    redis.call('SADD', F .. ':run:' .. job, id)
    if k then redis.call('SADD', F .. ':runk:' .. job .. ':' .. key, id) end
    return true, win
  end
  redis.call('ZADD', blocked.wait, score, id)
  redis.call('HSET', F .. ':parked', id, blocked.wait)
  redis.call('SADD', F .. ':waits:' .. job, blocked.wait)
  redis.call('SADD', F .. ':jobs', job)
  if blocked.win then arm(job, blocked.bucket, blocked.win, blocked.period) end
  -- The limits this attempt passed keep their room: the next attempt waiting for one of them may use it.
  for _, g in ipairs(gates) do
    if g.free then flow_wake(P, F, g.wait, job, 1) end
  end
  return nil
end

local count = tonumber(ARGV[1])
local expiry = now + tonumber(ARGV[2])
local result = { '-1', 'ok' }
local n = 0
local function lease(id, limited, win)
  n = n + 1
  local token = ARGV[3] .. (limited and '.f' or '.') .. n
  redis.call('HSET', KEYS[4], id, token)
  redis.call('HINCRBY', KEYS[6], id, 1)
  redis.call('ZADD', KEYS[3], expiry, id)
  if win then redis.call('ZADD', win, now, token) end
  result[#result + 1] = id
  result[#result + 1] = token
end

if redis.call('EXISTS', KEYS[7]) == 0 then
  local popped = redis.call('ZPOPMIN', KEYS[1], count)
  for i = 1, #popped, 2 do lease(popped[i], false, false) end
else
  -- Merge the heads of ready (peeked, removed at the end) and fready (one at a time: parking may wake waiters into
  -- it). Attempts of limited jobs looked at per call are bounded, so a crowd of them never delays the others long.
  local heads = redis.call('ZRANGE', KEYS[1], 0, count - 1, 'WITHSCORES')
  local ai, fromReady = 1, 0
  local budget = math.max(100, count * 4)
  while n < count do
    local f = budget > 0 and redis.call('ZRANGE', KEYS[7], 0, 0, 'WITHSCORES') or {}
    if f[1] and (not heads[ai] or tonumber(f[2]) < tonumber(heads[ai + 1])) then
      budget = budget - 1
      redis.call('ZREM', KEYS[7], f[1])
      local ok, win = admit(f[1], f[2])
      if ok then lease(f[1], true, win) end
    elseif heads[ai] then
      lease(heads[ai], false, false)
      ai = ai + 2
      fromReady = fromReady + 1
    else
      break
    end
  end
  if fromReady > 0 then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, fromReady - 1) end
end
if unknown then result[2] = 'restore' end

-- More ready work: wake the next blocked worker too. None: drop a marker left by pushes of ids this call took, so
-- no worker wakes for an empty claim (the caller gets the next due time below and waits for it).
if redis.call('ZCARD', KEYS[1]) > 0 or redis.call('EXISTS', KEYS[7]) == 1 then
  redis.call('ZADD', KEYS[5], 0, 'm')
else
  redis.call('ZREM', KEYS[5], 'm')
end
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
local timer = redis.call('ZRANGE', F .. ':timers', 0, 0, 'WITHSCORES')
local next = first[2] and tonumber(first[2]) or nil
if timer[2] and (not next or tonumber(timer[2]) < next) then next = tonumber(timer[2]) end
if next then result[1] = string.format('%d', next) end
return result
