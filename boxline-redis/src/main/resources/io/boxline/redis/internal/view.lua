-- view (reads only). KEYS: members, weights, status, leases. Returns now (micros), the live members
-- with their deadlines, all weights, all statuses, the held leases.
local now_us, now = clock()
return {int(now_us), redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. int(now), '+inf', 'WITHSCORES'),
  redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[3]), held_leases(KEYS[4])}
