-- setPolicy. KEYS: policies (HASH group -> JSON; field "" is the cluster default), stamp. ARGV:
-- field, then the JSON, or nothing to clear. The stamp, max(previous + 1, clock in micros), changes
-- with every policy change and keeps growing when Redis lost it, so members always re-read.
if ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
else
  redis.call('HDEL', KEYS[1], ARGV[1])
end
local now_us = clock()
local stamp = math.max(tonumber(redis.call('GET', KEYS[2]) or '0') + 1, now_us)
redis.call('SET', KEYS[2], int(stamp))
return 1
