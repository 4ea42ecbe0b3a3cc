-- check-in. KEYS: members (ZSET id -> deadline millis), weights (HASH), status (HASH id ->
-- "<last check-in millis>\n<MemberStatus text>"), leases (HASH). ARGV: member, weight, ttl millis,
-- status text. Returns now (micros), the live members' ids, their weights, the held leases.
local now_us, now = clock()
forget_expired(KEYS[1], KEYS[2], KEYS[3], now)
redis.call('ZADD', KEYS[1], int(now + tonumber(ARGV[3])), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], int(now) .. '\n' .. ARGV[4])
return {int(now_us), redis.call('ZRANGE', KEYS[1], 0, -1), redis.call('HGETALL', KEYS[2]),
  held_leases(KEYS[4])}
