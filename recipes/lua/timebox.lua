-- A time box as two sorted sets kept in step: KEYS[1] points by member,
-- KEYS[2] last activity (ms) by member. ARGV: now ms, stay ms, then
-- optionally member and points to add. Members whose last activity is at
-- or before now - stay leave both sets first. Reply: the member's new
-- total when one is given, else the box as {member, points, ...}.
local now, stay = tonumber(ARGV[1]), tonumber(ARGV[2])
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - stay)
for _, m in ipairs(old) do
  redis.call('ZREM', KEYS[1], m)
  redis.call('ZREM', KEYS[2], m)
end
if ARGV[3] then
  redis.call('ZADD', KEYS[2], now, ARGV[3])
  return redis.call('ZINCRBY', KEYS[1], ARGV[4], ARGV[3])
end
return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
