-- leave. KEYS: members, weights, status, leases. ARGV: member. Returns how many leases it freed.
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return free_where(KEYS[4], function(l) return l.owner == ARGV[1] end)
