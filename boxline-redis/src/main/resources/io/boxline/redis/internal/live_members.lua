-- liveMembers (reads only). KEYS: members. Returns the ids whose deadline is after now.
local _, now = clock()
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. int(now), '+inf')
