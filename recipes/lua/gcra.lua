-- CL.THROTTLE as a Lua script: the generic cell rate algorithm with its
-- theoretical arrival time (TAT, in microseconds) in a string key whose
-- TTL ends when the limiter is empty again. KEYS[1]: the limiter.
-- ARGV: max_burst, count per period, period (seconds), quantity (default
-- 1), and the time in ms (empty or absent: read TIME). Reply, as
-- redis-cell's: {limited, limit, remaining, retry_after s or -1,
-- reset_after s}, seconds rounded up at the millisecond.
local burst, count, period = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local qty = tonumber(ARGV[4] or '1')
local now
if ARGV[5] and ARGV[5] ~= '' then
  now = tonumber(ARGV[5]) * 1000
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local emission = math.floor(period * 1000000 / count)
local tolerance = emission * (burst + 1)
local increment = emission * qty
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local newtat = tat + increment
local diff = now - (newtat - tolerance)
local limited, retry, ttl = 0, -1, 0
if diff < 0 then
  limited = 1
  if increment <= tolerance then retry = -diff end
  ttl = tat - now
else
  ttl = newtat - now
  redis.call('SET', KEYS[1], string.format('%d', newtat), 'PX', string.format('%d', math.max(1, math.floor(ttl / 1000))))
end
local function secs(us)
  local s = math.floor(us / 1000000)
  if us - s * 1000000 >= 1000 then s = s + 1 end
  return s
end
local left = tolerance - ttl
local remaining = 0
if left > 0 then remaining = math.floor(left / emission) end
if retry ~= -1 then retry = secs(retry) end
return {limited, burst + 1, remaining, retry, secs(ttl)}
