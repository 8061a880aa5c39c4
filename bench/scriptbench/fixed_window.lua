-- Fixed-window rate limiter: one counter key per (subject KEYS[1],
-- window length, window number) for each (duration_s, limit) pair in
-- ARGV[2...]; every window is checked before any is counted. ARGV[1] is
-- the time in seconds (empty: read TIME).
local now = tonumber(ARGV[1])
if not now then now = tonumber(redis.call('TIME')[1]) end
local cost = 1
local keys = {}
for i = 2, #ARGV, 2 do
  local dur, limit = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  local k = KEYS[1] .. ':' .. dur .. ':' .. math.floor(now / dur)
  local used = tonumber(redis.call('GET', k) or '0')
  if used + cost > limit then
    return {0, dur, used, limit - used}
  end
  keys[#keys + 1] = {k, dur}
end
local counts = {}
for _, kd in ipairs(keys) do
  local c = redis.call('INCR', kd[1])
  if c == 1 then redis.call('EXPIRE', kd[1], kd[2]) end
  counts[#counts + 1] = c
end
return {1, 0, counts}
