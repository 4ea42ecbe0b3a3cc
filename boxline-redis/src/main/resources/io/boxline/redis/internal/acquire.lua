-- acquire. KEYS: leases. ARGV: member, then fields "<topicId>:<partition>". Returns, per field, the new
-- epoch, or -1 where someone holds the lease. A new epoch is max(previous + 1, Redis's clock in
-- micros): it grows even when Redis lost the previous one (a restart without persistence).
local now_us, now = clock()
local out = {}
for i = 2, #ARGV do
  local l = parse_lease(ARGV[i], redis.call('HGET', KEYS[1], ARGV[i]))
  if l and l.owner ~= '' then
    out[#out + 1] = '-1'
  else
    local epoch = now_us
    if l then
      epoch = math.max(tonumber(l.epoch) + 1, now_us)
    end
    if epoch >= 9007199254740992 then
      error('boxline: the epoch of lease ' .. ARGV[i] .. ' is beyond 2^53')
    end
    local e = int(epoch)
    redis.call('HSET', KEYS[1], ARGV[i], lease_value(e, false, int(now), ARGV[1]))
    out[#out + 1] = e
  end
end
return out
