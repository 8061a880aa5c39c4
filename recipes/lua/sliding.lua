-- RATELIMIT.SLIDING as a Lua script: the classic sliding-window limiter
-- over several limits and several subjects, one hash per subject.
-- KEYS: the subjects. ARGV[1]: weight; ARGV[2]: the time in seconds,
-- fractions allowed (empty: read TIME); then duration, limit, precision
-- for each limit (seconds, count, seconds). Per subject and limit the hash
-- holds the window count "D:P:", the oldest live sub-bucket "D:P:o" and the
-- sub-bucket counts "D:P:<id>" (D, P in ms, id = floor(ms / P)). Sub-buckets
-- that left the window are subtracted and deleted for every subject and
-- limit; every limit is checked before anything is counted. Reply:
-- {0 allowed | 1 denied, then per limit: remaining, ms until a request of
-- the same weight would pass (-1: never)}.
local weight = tonumber(ARGV[1])
local now
if ARGV[2] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  -- truncated, not rounded: a time's sub-bucket is floor(now / precision)
  now = math.floor(tonumber(ARGV[2]) * 1000)
end
local fmt = string.format
local lims = {}
for a = 3, #ARGV, 3 do
  local d = math.floor(tonumber(ARGV[a]) * 1000 + 0.5)
  local p = math.floor(tonumber(ARGV[a + 2]) * 1000 + 0.5)
  lims[#lims + 1] = {limit = tonumber(ARGV[a + 1]), prec = p,
    blocks = math.ceil(d / p), pre = fmt('%d:%d:', d, p)}
end

local st = {}
local denied = false
for k, key in ipairs(KEYS) do
  st[k] = {}
  for i, l in ipairs(lims) do
    local s = {cur = math.floor(now / l.prec), count = 0}
    local o = redis.call('HGET', key, l.pre .. 'o')
    if o then
      o = tonumber(o)
      if s.cur < o + l.blocks - 1 then s.cur = o + l.blocks - 1 end
    else
      s.fresh = true
    end
    s.trim = s.cur - l.blocks + 1
    if o then
      s.count = tonumber(redis.call('HGET', key, l.pre) or '0')
      if s.trim > o then
        local last = math.min(s.trim - 1, o + l.blocks - 1)
        for b = o, last do
          local f = l.pre .. fmt('%d', b)
          local v = redis.call('HGET', key, f)
          if v then
            s.count = s.count - tonumber(v)
            redis.call('HDEL', key, f)
          end
        end
        redis.call('HSET', key, l.pre, fmt('%d', s.count), l.pre .. 'o', fmt('%d', s.trim))
      end
    end
    if s.count + weight > l.limit then denied = true end
    st[k][i] = s
  end
end

if not denied and weight > 0 then
  for k, key in ipairs(KEYS) do
    local ttl = 0
    for i, l in ipairs(lims) do
      local s = st[k][i]
      redis.call('HINCRBY', key, l.pre .. fmt('%d', s.cur), weight)
      redis.call('HINCRBY', key, l.pre, weight)
      if s.fresh then redis.call('HSET', key, l.pre .. 'o', fmt('%d', s.trim)) end
      s.count = s.count + weight
      ttl = math.max(ttl, (s.cur + l.blocks) * l.prec - now)
    end
    redis.call('PEXPIRE', key, fmt('%d', ttl))
  end
end

local out = {denied and 1 or 0}
for i, l in ipairs(lims) do
  local rem, wait = nil, 0
  for k, key in ipairs(KEYS) do
    local s = st[k][i]
    local r = math.max(0, l.limit - s.count)
    if rem == nil or r < rem then rem = r end
    local w = 0
    if weight > l.limit then
      w = -1
    else
      local need = s.count + weight - l.limit
      if need > 0 then
        w = (s.cur + l.blocks) * l.prec - now
        local acc = 0
        for b = s.trim, s.cur do
          acc = acc + tonumber(redis.call('HGET', key, l.pre .. fmt('%d', b)) or '0')
          if acc >= need then
            w = (b + l.blocks) * l.prec - now
            break
          end
        end
      end
    end
    if w == -1 or wait == -1 then wait = -1 elseif w > wait then wait = w end
  end
  out[#out + 1] = rem
  out[#out + 1] = wait
end
return out
