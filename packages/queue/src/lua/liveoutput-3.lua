--[[
  liveoutput: appends one interval's output of a running attempt to its stream, within a byte cap per attempt and a
  global budget, so that live output can never take the memory the queue needs (the node refuses writes when full).
  Bytes are counted as text; the streams' own overhead is bounded by the entry cap.

  KEYS[1] stream   stream  the attempt's writes, field d: the text
  KEYS[2] index    zset    execution id -> when its stream expires (ms): the attempts that hold live output now
  KEYS[3] sizes    hash    execution id -> bytes of text its stream holds
  ARGV[1] execution id, ARGV[2] text (may be empty), ARGV[3] "1" when the attempt ended, ARGV[4] ttl ms while it
  runs, ARGV[5] ttl ms once it ended, ARGV[6] bytes kept per attempt, ARGV[7] entries kept per attempt,
  ARGV[8] attempts streaming at once at most (the budget divided by the per-attempt bytes)
  returns the bytes the stream holds, or -1 when the budget is full and this attempt has no stream yet
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id, text = ARGV[1], ARGV[2]

-- Streams that expired leave the index (their keys expired with them).
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 100)
if #gone > 0 then
  redis.call('ZREM', KEYS[2], unpack(gone))
  redis.call('HDEL', KEYS[3], unpack(gone))
end

local known = redis.call('ZSCORE', KEYS[2], id)
if not known then
  if text == '' then return 0 end
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[8]) then return -1 end
  -- A stream left without its index entry (an index lost to a flush) starts counting again from nothing.
  redis.call('DEL', KEYS[1])
end

local size = tonumber(redis.call('HGET', KEYS[3], id) or '0')
if text ~= '' then
  redis.call('XADD', KEYS[1], '*', 'd', text)
  size = size + #text
  local maxBytes, maxEntries = tonumber(ARGV[6]), tonumber(ARGV[7])
  local length = redis.call('XLEN', KEYS[1])
  if size > maxBytes or length > maxEntries then
    -- Drop the oldest writes until both caps hold, keeping the newest one whatever its size.
    local entries = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', length)
    local keep = nil
    for i = 1, #entries - 1 do
      if size <= maxBytes and length <= maxEntries then
        keep = entries[i][1]
        break
      end
      size = size - #entries[i][2][2]
      length = length - 1
    end
    keep = keep or entries[#entries][1]
    redis.call('XTRIM', KEYS[1], 'MINID', keep)
  end
end

local ttl = tonumber(ARGV[3] == '1' and ARGV[5] or ARGV[4])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('HSET', KEYS[3], id, size)
redis.call('ZADD', KEYS[2], now + ttl, id)
return size
