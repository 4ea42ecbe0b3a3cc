-- renew. KEYS: members, status. ARGV: ttl millis, then distinct member ids. Moves the deadline of each
-- live one (an expired member is not brought back: it checks in again); returns how many.
local _, now = clock()
local deadline = int(now + tonumber(ARGV[1]))
local renewed = 0
for i = 2, #ARGV do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and tonumber(score) > now then
    redis.call('ZADD', KEYS[1], 'XX', deadline, ARGV[i])
    local v = redis.call('HGET', KEYS[2], ARGV[i])
    if v then
      -- A renewal is a check-in on the member's behalf: its time moves, its report stays.
      redis.call('HSET', KEYS[2], ARGV[i], int(now) .. (string.match(v, '^%d+(\n.*)$') or '\n'))
    end
    renewed = renewed + 1
  end
end
return renewed
