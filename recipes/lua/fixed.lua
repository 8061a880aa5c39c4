-- A fixed-window counter with a cap (INCREX key BYINT w UBOUND limit PX
-- ttl ENX as a script). KEYS[1]: the window's counter. ARGV: weight, limit,
-- ttl ms. A request that would pass the limit adds nothing. Reply: {count,
-- added}.
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local w, lim = tonumber(ARGV[1]), tonumber(ARGV[2])
if v + w > lim then return {v, 0} end
v = redis.call('INCRBY', KEYS[1], w)
redis.call('PEXPIRE', KEYS[1], ARGV[3], 'NX')
return {v, w}
