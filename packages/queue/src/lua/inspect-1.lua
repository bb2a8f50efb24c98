--[[
  inspect: why attempts of limited jobs wait (read only; includes/flow.lua has the keys).

  KEYS[1] flow  the prefix of the flow keys
  ARGV    job ids; none: the jobs that have attempts waiting (at most 200)
  returns per job { job, holding a slot, waiting for a job slot, for a key slot, for a rate window,
                    { key, holding, waiting, ... } (keys with attempts waiting), starts in the job-wide rate
                    window or -1, ms when the next may start or -1 }
]]
local F = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local jobs = ARGV
if #jobs == 0 then jobs = redis.call('SRANDMEMBER', F .. ':jobs', 200) end
local out = {}
for _, job in ipairs(jobs) do
  local wc, wk, wr, keys = 0, 0, 0, {}
  for _, W in ipairs(redis.call('SMEMBERS', F .. ':waits:' .. job)) do
    local n = redis.call('ZCARD', W)
    local kind = string.sub(W, #F + 2, #F + 3)
    if kind == 'wc' then
      wc = wc + n
    elseif kind == 'wk' then
      wk = wk + n
      local key = string.sub(W, #F + #job + 6)
      keys[#keys + 1] = key
      keys[#keys + 1] = redis.call('SCARD', F .. ':runk:' .. job .. ':' .. key)
      keys[#keys + 1] = n
    else
      wr = wr + n
    end
  end
  local inWindow, nextStart = -1, -1
  local lim = redis.call('HMGET', F .. ':job:' .. job, 'r', 'p', 'pk')
  if lim[1] and lim[3] ~= '1' then
    local from = now - tonumber(lim[2])
    inWindow = redis.call('ZCOUNT', F .. ':rate:' .. job, '(' .. from, '+inf')
    if inWindow >= tonumber(lim[1]) then
      local oldest = redis.call('ZRANGEBYSCORE', F .. ':rate:' .. job, '(' .. from, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
      if oldest[2] then nextStart = tonumber(oldest[2]) + tonumber(lim[2]) end
    end
  end
  out[#out + 1] = { job, redis.call('SCARD', F .. ':run:' .. job), wc, wk, wr, keys, inWindow, nextStart }
end
return out
