-- Prepended to every Boxline script. Each script is one atomic step, and every time in it comes from
-- Redis's own clock (TIME), so deadlines and lease times never depend on the clients' clocks.

-- Redis 3.2 to 4 replicate a script as its text unless told otherwise, and a replica's TIME differs.
if redis.replicate_commands then redis.replicate_commands() end

-- Redis's clock in microseconds and in milliseconds (exact in Lua's doubles until the year 2255).
local function clock()
  local t = redis.call('TIME')
  local s, us = tonumber(t[1]), tonumber(t[2])
  return s * 1000000 + us, s * 1000 + math.floor(us / 1000)
end

-- A whole number as decimal text: tostring would write 1.7e+15.
local function int(n)
  return string.format('%.0f', n)
end

-- A lease: "<epoch> <releasing 0|1> <since millis> <owner>", owner empty when free. A free lease keeps
-- its value, so the next owner's epoch is above it.
local function parse_lease(field, v)
  if not v then
    return nil
  end
  local epoch, releasing, since, owner = string.match(v, '^(%d+) ([01]) (%d+) (.*)$')
  if not epoch then
    error('boxline: unreadable lease ' .. field .. ': ' .. v)
  end
  return {epoch = epoch, releasing = releasing == '1', since = since, owner = owner}
end

local function lease_value(epoch, releasing, since, owner)
  return epoch .. ' ' .. (releasing and '1' or '0') .. ' ' .. since .. ' ' .. owner
end

-- Frees a held lease; its epoch stays for the next owner.
local function free(key, field, l)
  redis.call('HSET', key, field, lease_value(l.epoch, false, l.since, ''))
end

-- Frees every held lease for which release(l) is true; returns how many.
local function free_where(key, release)
  local all = redis.call('HGETALL', key)
  local freed = 0
  for i = 1, #all, 2 do
    local l = parse_lease(all[i], all[i + 1])
    if l.owner ~= '' and release(l) then
      free(key, all[i], l)
      freed = freed + 1
    end
  end
  return freed
end

-- The held leases as field, value, field, value, ...
local function held_leases(key)
  local all = redis.call('HGETALL', key)
  local out = {}
  for i = 1, #all, 2 do
    if parse_lease(all[i], all[i + 1]).owner ~= '' then
      out[#out + 1] = all[i]
      out[#out + 1] = all[i + 1]
    end
  end
  return out
end

-- Drops members whose deadline has passed (live means deadline > now), with their weight and status.
local function forget_expired(members, weights, status, now)
  local gone = redis.call('ZRANGEBYSCORE', members, '-inf', int(now))
  for _, id in ipairs(gone) do
    redis.call('HDEL', weights, id)
    redis.call('HDEL', status, id)
  end
  if #gone > 0 then
    redis.call('ZREMRANGEBYSCORE', members, '-inf', int(now))
  end
end

