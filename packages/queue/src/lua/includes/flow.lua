--[[
  flow (included by the scripts that touch attempts of limited jobs): shared helpers and the flow key layout.
  F is "<prefix>:flow" (a KEYS entry of the including script); P is the prefix. Every key below starts with the
  prefix, so it shares its {hash tag} and cluster slot with the keys the script declares.

  F:items              hash  id -> "job \t lane \t key": attempts of limited jobs, from their push until acknowledged
  F:parked             hash  id -> the waiting set the attempt is parked in
  F:job:<job>          hash  c (max concurrency), k (per key), r (rate limit), p (period ms), pk ("1": rate per key),
                             v (version); a job without limits has v only; no hash: limits unknown (ask PostgreSQL)
  F:run:<job>          set   ids holding a slot of the job (every claimed attempt of a limited job)
  F:runk:<job>:<key>   set   ids holding a slot of the key value (jobs with a per-key limit)
  F:rate:<bucket>      zset  claim token -> start ms, the rate window (bucket: <job>, or <job>:<key> per key)
  F:wc:<job>, F:wk:<job>:<key>, F:wr:<bucket>
                       zsets id -> ready score: attempts waiting for a job slot, a key slot, a rate window
  F:waits:<job>        set   the job's waiting sets that are not empty; F:jobs: jobs that have one
  F:timers             zset  "job \t bucket" -> when that bucket's rate window opens again (its waiters go back then)
  F:unknown            zset  id -> ready score: attempts whose job's limits are unknown (the worker asks PostgreSQL)
  P:<lane>:fready      zset  id -> ready score: attempts of limited jobs ready to be checked against their limits
  Claim tokens of limited attempts contain ".f" (base64url has no "."), so acknowledgements know to free slots.
]]
local function flow_parse(desc)
  return string.match(desc, '^([^\t]*)\t([^\t]*)\t(.*)$')
end

-- Keeps the registries of waiting sets in step once W may have emptied.
local function flow_waits_cleanup(F, W, job)
  if redis.call('EXISTS', W) == 0 then
    redis.call('SREM', F .. ':waits:' .. job, W)
    if redis.call('EXISTS', F .. ':waits:' .. job) == 0 then redis.call('SREM', F .. ':jobs', job) end
  end
end

-- Sends up to n attempts from the head of waiting set W back to their lane's fready set, and wakes a worker there.
local function flow_wake(P, F, W, job, n)
  if n <= 0 then return 0 end
  local popped = redis.call('ZPOPMIN', W, n)
  if #popped == 0 then return 0 end
  for i = 1, #popped, 2 do
    local id = popped[i]
    redis.call('HDEL', F .. ':parked', id)
    local desc = redis.call('HGET', F .. ':items', id)
    if desc then
      local _, lane = flow_parse(desc)
      redis.call('ZADD', P .. ':' .. lane .. ':fready', popped[i + 1], id)
      redis.call('ZADD', P .. ':' .. lane .. ':marker', 0, 'm')
    end
  end
  flow_waits_cleanup(F, W, job)
  return #popped / 2
end

-- Frees the slots attempt `id` holds; each freed slot lets the first attempt waiting for it be checked again.
local function flow_release(P, F, id)
  local desc = redis.call('HGET', F .. ':items', id)
  if not desc then return end
  local job, _, key = flow_parse(desc)
  if redis.call('SREM', F .. ':run:' .. job, id) == 1 then flow_wake(P, F, F .. ':wc:' .. job, job, 1) end
  if redis.call('SREM', F .. ':runk:' .. job .. ':' .. key, id) == 1 then
    flow_wake(P, F, F .. ':wk:' .. job .. ':' .. key, job, 1)
  end
end

-- Drops the tag of an attempt that is neither leased nor waiting anywhere (it finished, or was dropped).
local function flow_forget(P, F, id)
  local desc = redis.call('HGET', F .. ':items', id)
  if not desc then return end
  local _, lane = flow_parse(desc)
  local base = P .. ':' .. lane
  if redis.call('ZSCORE', base .. ':lease', id) or redis.call('ZSCORE', base .. ':fready', id) or redis.call('HEXISTS', F .. ':parked', id) == 1 then
    return
  end
  redis.call('HDEL', F .. ':items', id)
end

-- Takes a waiting attempt out of its lane's fready set and out of whatever waiting set holds it; returns how many.
local function flow_unpark(P, F, id, lane)
  local removed = redis.call('ZREM', P .. ':' .. lane .. ':fready', id)
  local W = redis.call('HGET', F .. ':parked', id)
  if W then
    removed = removed + redis.call('ZREM', W, id)
    redis.call('HDEL', F .. ':parked', id)
    local desc = redis.call('HGET', F .. ':items', id)
    if desc and W ~= F .. ':unknown' then flow_waits_cleanup(F, W, (flow_parse(desc))) end
  end
  return removed
end
