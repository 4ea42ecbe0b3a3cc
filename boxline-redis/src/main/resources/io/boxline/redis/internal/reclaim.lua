-- reclaim. KEYS: leases. ARGV: grace millis, then the live members. Frees leases of members not
-- live, and RELEASING leases older than the grace (on Redis's clock); returns how many.
local _, now = clock()
local cutoff = now - tonumber(ARGV[1])
local live = {}
for i = 2, #ARGV do
  live[ARGV[i]] = true
end
return free_where(KEYS[1], function(l)
  return not live[l.owner] or (l.releasing and tonumber(l.since) < cutoff)
end)
