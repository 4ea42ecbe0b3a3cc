-- markReleasing. KEYS: leases. ARGV: field, member, epoch. 1 if that member held it at that epoch.
local l = parse_lease(ARGV[1], redis.call('HGET', KEYS[1], ARGV[1]))
if not l or l.owner ~= ARGV[2] or l.epoch ~= ARGV[3] then
  return 0
end
local _, now = clock()
redis.call('HSET', KEYS[1], ARGV[1], lease_value(l.epoch, true, int(now), l.owner))
return 1
