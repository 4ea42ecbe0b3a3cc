-- forceRelease. KEYS: leases. ARGV: fields. Frees those held, whoever holds them; returns how many.
local freed = 0
for i = 1, #ARGV do
  local l = parse_lease(ARGV[i], redis.call('HGET', KEYS[1], ARGV[i]))
  if l and l.owner ~= '' then
    free(KEYS[1], ARGV[i], l)
    freed = freed + 1
  end
end
return freed
