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
  KEYS[10] turn    string the worker whose turn it is to run a suspect of this lane (expires after a lease)
  ARGV[1] count, ARGV[2] lease ms, ARGV[3] token prefix (unique per call), ARGV[4] promote limit, ARGV[5] lane,
  ARGV[6] worker id, ARGV[7] "1": the worker has nothing in flight (it may take a suspect)
  returns { next due ms (delayed id or rate window) or "-1", "ok" | "paused" | "restore", isolation, id1, token1, ... }
    "restore": the flow state is lost (nothing is claimed), or an attempt's job limits are unknown (claims go on)
    isolation: "alone" (the one id claimed is a suspect: the worker runs it alone), "turn" (a suspect waits and it is
    this worker's turn to take it: it claims nothing more until it is idle), or ""

  A suspect is an attempt claimed before whose claim was never acknowledged (deliveries > 0: its worker was lost, and
  it may be a poison job that kills its worker). It is claimed only by a worker with nothing in flight, as the only
  id of that claim, so that it can take no healthy attempt down with it. A busy worker's claim passes over it; the
  first one to meet it takes the lane's turn (KEYS[10]) and stops there, so one worker empties itself for it while
  the others go on. A claim with count 0 only keeps the caller's turn (the worker renews it while it empties).
]]
-- @include flow.lua
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local control = redis.call('HMGET', KEYS[8], 'restored', 'paused:' .. ARGV[5])
if not control[1] then return { '-1', 'restore', '' } end
if control[2] == '1' then
  -- Nothing starts; no marker either, so waiting workers are not woken for this lane until it resumes.
  redis.call('ZREM', KEYS[5], 'm')
  return { '-1', 'paused', '' }
end
local worker, idle = ARGV[6], ARGV[7] == '1'
if tonumber(ARGV[1]) == 0 then
  if worker == '' or redis.call('GET', KEYS[10]) ~= worker then return { '-1', 'ok', '' } end
  redis.call('PEXPIRE', KEYS[10], ARGV[2])
  return { '-1', 'ok', 'turn' }
end
-- An idle worker's turn has served: it meets the suspect now, and takes it or the turn again.
if idle and redis.call('GET', KEYS[10]) == worker then redis.call('DEL', KEYS[10]) end
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
local result = { '-1', 'ok', '' }
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

-- Suspects left where they wait by this call (they wake no other worker: only an idle one may take them).
local passed = 0
-- What this claim does with a suspect it meets: "take" it (alone), "stop" before it (this worker's turn to empty
-- itself for it), or "pass" over it (another worker has the turn).
local function meet()
  if idle and n == 0 then return 'take' end
  passed = passed + 1
  if worker == '' then return 'pass' end
  local holder = redis.call('GET', KEYS[10])
  if holder and holder ~= worker then return 'pass' end
  redis.call('SET', KEYS[10], worker, 'PX', ARGV[2])
  result[3] = 'turn'
  return 'stop'
end
local function took_alone()
  result[3] = 'alone'
  if redis.call('GET', KEYS[10]) == worker then redis.call('DEL', KEYS[10]) end
end

if redis.call('EXISTS', KEYS[7]) == 0 then
  -- Suspects passed over (and what follows a stop) go back at the end, so a second pop looks past them.
  local back = {}
  local stop = false
  local looked = 0
  while n < count and not stop and looked < count + 100 do
    local popped = redis.call('ZPOPMIN', KEYS[1], count - n)
    if #popped == 0 then break end
    local ids = {}
    for i = 1, #popped, 2 do ids[#ids + 1] = popped[i] end
    looked = looked + #ids
    local deliveries = redis.call('HMGET', KEYS[6], unpack(ids))
    for j, id in ipairs(ids) do
      local m = stop and 'back' or (deliveries[j] and meet() or 'lease')
      if m == 'lease' or m == 'take' then
        lease(id, false, false)
        if m == 'take' then
          took_alone()
          stop = true
        end
      else
        back[#back + 1] = popped[j * 2]
        back[#back + 1] = id
        stop = stop or m == 'stop'
      end
    end
  end
  if #back > 0 then redis.call('ZADD', KEYS[1], unpack(back)) end
else
  -- Merge the heads of ready (peeked, removed at the end) and fready (one at a time: parking may wake waiters into
  -- it). Attempts of limited jobs looked at per call are bounded, so a crowd of them never delays the others long.
  local heads = redis.call('ZRANGE', KEYS[1], 0, count - 1, 'WITHSCORES')
  local ai = 1
  local taken, held = {}, {}
  local budget = math.max(100, count * 4)
  local stop = false
  while n < count and not stop do
    local f = budget > 0 and redis.call('ZRANGE', KEYS[7], 0, 0, 'WITHSCORES') or {}
    if f[1] and (not heads[ai] or tonumber(f[2]) < tonumber(heads[ai + 1])) then
      budget = budget - 1
      redis.call('ZREM', KEYS[7], f[1])
      local m = redis.call('HEXISTS', KEYS[6], f[1]) == 1 and meet() or 'lease'
      if m == 'pass' or m == 'stop' then
        -- Put back at the end, so that this loop looks past it.
        held[#held + 1] = f[2]
        held[#held + 1] = f[1]
        stop = m == 'stop'
      else
        local ok, win = admit(f[1], f[2])
        if ok then
          lease(f[1], true, win)
          if m == 'take' then
            took_alone()
            stop = true
          end
        end
      end
    elseif heads[ai] then
      local id = heads[ai]
      ai = ai + 2
      local m = redis.call('HEXISTS', KEYS[6], id) == 1 and meet() or 'lease'
      if m == 'stop' then
        stop = true
      elseif m ~= 'pass' then
        lease(id, false, false)
        taken[#taken + 1] = id
        if m == 'take' then
          took_alone()
          stop = true
        end
      end
    else
      break
    end
  end
  if #taken > 0 then redis.call('ZREM', KEYS[1], unpack(taken)) end
  if #held > 0 then redis.call('ZADD', KEYS[7], unpack(held)) end
end
if unknown then result[2] = 'restore' end

-- More ready work: wake the next blocked worker too. None (or only suspects passed over): drop a marker left by pushes
-- of ids this call took, so no worker wakes for an empty claim (the caller gets the next due time below and waits for it).
if redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[7]) > passed then
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
