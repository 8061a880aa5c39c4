-- Claims a batch of a Buffer's pending counters for flushing. KEYS[1]:
-- the dirty set (item -> first change, ms); KEYS[2]: the in-flight index
-- (item -> batch id). ARGV: the buffer's key prefix, the most items to
-- claim, and a random batch id prefix. Items still in flight (a flusher
-- died before clearing them) are returned as they are, with their batch
-- ids, and nothing new is claimed until they are cleared; otherwise each
-- dirty item's pending hash is renamed to its in-flight hash and given a
-- batch id. Reply: {item, batch, ...}.
local out = redis.call('HGETALL', KEYS[2])
if #out > 0 then return out end
local items = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
for i, item in ipairs(items) do
  local pending = ARGV[1] .. 'pending:' .. item
  if redis.call('EXISTS', pending) == 1 then
    local batch = ARGV[3] .. ':' .. i
    redis.call('RENAME', pending, ARGV[1] .. 'inflight:' .. item)
    redis.call('HSET', KEYS[2], item, batch)
    out[#out + 1] = item
    out[#out + 1] = batch
  end
  redis.call('ZREM', KEYS[1], item)
end
return out
