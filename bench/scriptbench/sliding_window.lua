-- Sliding-window rate limiter over several limits, kept in one hash per
-- subject (KEYS[1]). ARGV[1]: JSON list of {window_ms, limit, bucket_ms};
-- ARGV[2]: cost (default 1); ARGV[3]: the time in ms (empty: read TIME).
-- Per window the hash holds the running total t:<w>, the oldest live
-- bucket o:<w> and the bucket counts b:<w>:<start>; buckets that slid out
-- of the window are subtracted and deleted. Every limit is checked before
-- any is counted. Reply: {1, 0, remaining per limit} or {0, limit index,
-- remaining}.
local key = KEYS[1]
local limits = cjson.decode(ARGV[1])
local cost = tonumber(ARGV[2]) or 1
local now = tonumber(ARGV[3])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local state = {}
local maxwin = 0
for i, l in ipairs(limits) do
  local win, limit, bucket = l[1], l[2], l[3]
  if win > maxwin then maxwin = win end
  local cur = math.floor(now / bucket) * bucket
  local oldest = cur - win + bucket
  local total = tonumber(redis.call('HGET', key, 't:' .. win) or '0')
  local o = tonumber(redis.call('HGET', key, 'o:' .. win) or oldest)
  local expired = false
  while o < oldest and total > 0 do
    local f = 'b:' .. win .. ':' .. o
    local c = tonumber(redis.call('HGET', key, f) or '0')
    if c > 0 then
      total = total - c
      redis.call('HDEL', key, f)
    end
    o = o + bucket
    expired = true
  end
  if o < oldest then o = oldest end
  if expired then
    redis.call('HSET', key, 't:' .. win, total)
    redis.call('HSET', key, 'o:' .. win, o)
  end
  if total + cost > limit then
    return {0, i, limit - total}
  end
  state[i] = {win, cur, o, limit - total - cost}
end
local remaining = {}
for i, s in ipairs(state) do
  redis.call('HINCRBY', key, 'b:' .. s[1] .. ':' .. s[2], cost)
  redis.call('HINCRBY', key, 't:' .. s[1], cost)
  redis.call('HSET', key, 'o:' .. s[1], s[3])
  remaining[i] = s[4]
end
redis.call('EXPIRE', key, math.ceil(maxwin / 1000) + 1)
return {1, 0, remaining}
