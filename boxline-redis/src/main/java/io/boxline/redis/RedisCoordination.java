package io.boxline.redis;

import io.boxline.GroupPolicy;
import io.boxline.StoreException;
import io.boxline.ValidationException;
import io.boxline.redis.internal.Calls;
import io.boxline.redis.internal.Keys;
import io.boxline.redis.internal.Script;
import io.boxline.redis.internal.Values;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.MemberStatus;
import io.boxline.spi.PartitionKey;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.KeyValue;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Consumer-group coordination in Redis, for deployments that want membership and lease traffic off
 * the database. Cursors (and therefore fencing) stay in the database; this store only hands out
 * leases and epochs.
 *
 * <p>Mapping onto Redis (key layout in {@link Keys}, values in {@link Values}):
 *
 * <ul>
 *   <li><b>Every operation that reads and writes is one Lua script</b> ({@code EVALSHA}), so it is
 *       atomic: a compare-and-set on a lease cannot interleave with another client's.
 *   <li><b>Members</b> are a sorted set scored by their deadline (epoch millis), with their weights
 *       and reported status in two hashes. A check-in is one script that drops expired members,
 *       writes the member and reads the group (members and held leases), sent together with a read
 *       of the policy stamp: one round trip.
 *   <li><b>Partition leases</b> are one hash per group, a field per partition holding epoch,
 *       releasing flag, time and owner. A free lease keeps its field (empty owner) so the epoch
 *       survives.
 *   <li><b>Epochs</b> only grow: each acquisition takes {@code max(previous + 1, Redis's clock in
 *       microseconds)}. So a Redis that lost its data (a restart without persistence, a failover to
 *       an empty replica) does not hand out an epoch lower than one a cursor in the database has
 *       seen, as long as Redis's clock does not run backwards by more than the time since.
 *   <li><b>Policies</b> are JSON in one hash (field {@code ""} the cluster default) with a stamp
 *       that changes on every change ({@link GroupView#policyStamp()}).
 * </ul>
 *
 * <p><b>Clock.</b> Every time (deadlines, {@link GroupView#now()}, a lease's {@code since}, the
 * grace period of {@link #reclaim}) is Redis's own ({@code TIME} inside the scripts), so clients'
 * clocks do not matter.
 *
 * <p><b>Servers.</b> A standalone Redis ({@code redis://}, {@code rediss://} for TLS) or one behind
 * Sentinel ({@code redis-sentinel://host:26379/0#mymaster}); the scripts use nothing newer than
 * Redis 5 (tested with 7.0). Each group's keys share a hash slot, but this client does not follow
 * Redis Cluster redirections. Redis must not evict these keys (they have no TTL: {@code noeviction}
 * or a {@code volatile-*} policy).
 *
 * <p>Every call is bounded by the timeout and every failure is a {@link StoreException} naming the
 * operation and the server (never its password). The client connects on first use and reconnects by
 * itself; while disconnected, calls fail at once.
 */
public final class RedisCoordination implements CoordinationStore {
  public static final String DEFAULT_KEY_PREFIX = "boxline:";
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

  private static final System.Logger LOG = System.getLogger(RedisCoordination.class.getName());

  private static final Duration CLOSE_BOUND = Duration.ofSeconds(3);

  /** The longest duration Boxline stores anywhere (100 years). */
  private static final Duration MAX_DURATION = Duration.ofDays(36_500);

  private static final Set<String> SCHEMES =
      Set.of("redis", "rediss", "redis-sentinel", "rediss-sentinel");

  private final RedisClient client;
  private final Keys keys;
  private final Calls calls;
  private final String description;
  private final Object connecting = new Object();
  private final AtomicBoolean closed = new AtomicBoolean();

  private volatile StatefulRedisConnection<String, String> connection;

  private RedisCoordination(Builder b) {
    String target = Calls.display(b.uri);
    this.keys = new Keys(b.keyPrefix);
    this.calls = new Calls(target, b.timeout);
    this.description = "Redis coordination (" + target + ", prefix " + keys.prefix() + ")";
    RedisURI uri = RedisURI.create(b.uri);
    uri.setTimeout(b.timeout);
    if (uri.getClientName() == null) {
      uri.setClientName("boxline-coordination"); // what CLIENT LIST shows operators
    }
    this.client = RedisClient.create(uri);
    client.setOptions(
        ClientOptions.builder()
            .socketOptions(SocketOptions.builder().connectTimeout(b.timeout).build())
            // Futures time out too, so a call to a Redis that stopped answering never queues.
            .timeoutOptions(TimeoutOptions.enabled(b.timeout))
            // While reconnecting, calls fail at once: the engine retries at its next check-in.
            .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
            .build());
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Settings of a {@link RedisCoordination}. */
  public static final class Builder {
    private String uri;
    private String keyPrefix = DEFAULT_KEY_PREFIX;
    private Duration timeout = DEFAULT_TIMEOUT;

    private Builder() {}

    /**
     * The Redis server, e.g. {@code redis://127.0.0.1:6379}, {@code rediss://:password@host:6380/2}
     * (TLS, database 2), {@code redis://user:password@host:6379} (ACL user) or {@code
     * redis-sentinel://host1:26379,host2:26379/0#mymaster}. Required.
     */
    public Builder uri(String uri) {
      this.uri = validateUri(uri);
      return this;
    }

    /**
     * Prefix of every key this store writes (default {@value #DEFAULT_KEY_PREFIX}); ends with
     * {@code :}. Deployments sharing a Redis use different prefixes.
     */
    public Builder keyPrefix(String prefix) {
      this.keyPrefix = Keys.validatePrefix(prefix);
      return this;
    }

    /**
     * Bound of connecting and of every call to Redis (default 5 s); a call that takes longer fails.
     */
    public Builder timeout(Duration timeout) {
      if (timeout == null || timeout.isNegative() || timeout.isZero()) {
        throw new ValidationException(
            "Redis timeout must be a positive duration, e.g. Duration.ofSeconds(5), got "
                + timeout);
      }
      if (timeout.compareTo(Duration.ofHours(1)) > 0) {
        throw new ValidationException(
            "Redis timeout must be at most 1 hour (it bounds every check-in), got " + timeout);
      }
      this.timeout = timeout;
      return this;
    }

    /** A client for these settings; it connects on the first call. */
    public RedisCoordination build() {
      if (uri == null) {
        throw new ValidationException(
            "Redis coordination needs a server: RedisCoordination.builder()"
                + ".uri(\"redis://127.0.0.1:6379\")");
      }
      return new RedisCoordination(this);
    }

    private static String validateUri(String uri) {
      if (uri == null || uri.isBlank()) {
        throw new ValidationException(
            "Redis uri must not be empty; use e.g. redis://127.0.0.1:6379");
      }
      String u = uri.strip();
      int colon = u.indexOf("://");
      String shown = Calls.display(u);
      if (colon < 0 || !SCHEMES.contains(u.substring(0, colon))) {
        throw new ValidationException(
            "Redis uri must start with redis://, rediss:// (TLS), redis-sentinel:// or"
                + " rediss-sentinel://, e.g. redis://127.0.0.1:6379, got '"
                + shown
                + "'");
      }
      boolean sentinel = u.substring(0, colon).endsWith("-sentinel");
      if (sentinel && (u.indexOf('#') < 0 || u.endsWith("#"))) {
        throw new ValidationException(
            "Redis Sentinel uri needs the master's name after '#', e.g."
                + " redis-sentinel://127.0.0.1:26379/0#mymaster, got '"
                + shown
                + "'");
      }
      RedisURI parsed;
      try {
        parsed = RedisURI.create(u);
      } catch (RuntimeException e) {
        // Lettuce's message may repeat the uri, password included: leave it out.
        throw new ValidationException(
            "Redis uri '"
                + shown
                + "' is not valid; use e.g. redis://127.0.0.1:6379/0 or"
                + " rediss://:password@redis.example:6380");
      }
      if (!sentinel && (parsed.getHost() == null || parsed.getHost().isBlank())) {
        throw new ValidationException(
            "Redis uri needs a host, e.g. redis://127.0.0.1:6379, got '" + shown + "'");
      }
      return u;
    }
  }

  @Override
  public String describe() {
    return description;
  }

  // ------------------------------------------------------------------ members

  @Override
  public GroupView checkIn(
      String group, String member, double weight, Duration ttl, MemberStatus status) {
    String op = "checkIn(group " + group + ", member " + member + ")";
    String[] groupKeys = keys.group(group).all();
    String[] args = {
      Keys.member(member),
      Values.weight(weight),
      Long.toString(millis("check-in ttl", ttl)),
      Values.status(status)
    };
    RedisAsyncCommands<String, String> c = commands(op);
    RedisFuture<Object> sent =
        c.evalsha(Script.CHECK_IN.sha(), ScriptOutputType.MULTI, groupKeys, args);
    // Sent with the script: one round trip. It need not be atomic with the check-in, since a
    // member whose stamp changed reads the policy afterwards anyway.
    RedisFuture<String> stamp = c.get(keys.policyStamp());
    Object reply = finish(op, c, sent, Script.CHECK_IN, ScriptOutputType.MULTI, groupKeys, args);
    return Values.checkIn(reply, stamp(op, stamp));
  }

  /** One script: members with their check-in times, deadlines and reports, and held leases. */
  @Override
  public GroupView view(String group) {
    String op = "view(group " + group + ")";
    String[] groupKeys = keys.group(group).all();
    RedisAsyncCommands<String, String> c = commands(op);
    RedisFuture<Object> sent =
        c.evalsha(Script.VIEW.sha(), ScriptOutputType.MULTI, groupKeys, new String[0]);
    RedisFuture<String> stamp = c.get(keys.policyStamp());
    Object reply =
        finish(op, c, sent, Script.VIEW, ScriptOutputType.MULTI, groupKeys, new String[0]);
    return Values.view(reply, stamp(op, stamp));
  }

  @Override
  public void leave(String group, String member) {
    String op = "leave(group " + group + ", member " + member + ")";
    Object freed =
        run(op, Script.LEAVE, ScriptOutputType.INTEGER, keys.group(group).all(), member(member));
    LOG.log(System.Logger.Level.DEBUG, "{0}: freed {1} leases", op, freed);
  }

  /** One script renews them all, on Redis's clock. */
  @Override
  public int renew(String group, Collection<String> members, Duration ttl) {
    String op = "renew(group " + group + ")";
    List<String> args = new ArrayList<>();
    args.add(Long.toString(millis("renewal ttl", ttl)));
    for (String m : new LinkedHashSet<>(members)) {
      args.add(member(m));
    }
    if (args.size() == 1) {
      return 0;
    }
    Keys.Group g = keys.group(group);
    return count(
        run(
            op,
            Script.RENEW,
            ScriptOutputType.INTEGER,
            new String[] {g.members(), g.status()},
            args.toArray(String[]::new)));
  }

  @Override
  public List<String> liveMembers(String group) {
    String op = "liveMembers(group " + group + ")";
    List<String> live = new ArrayList<>();
    Object reply =
        run(
            op,
            Script.LIVE_MEMBERS,
            ScriptOutputType.MULTI,
            new String[] {keys.group(group).members()});
    for (Object id : Values.list(reply)) {
      live.add((String) id);
    }
    live.sort(null);
    return live;
  }

  // ------------------------------------------------------------------ leases

  @Override
  public List<OptionalLong> acquire(String group, List<PartitionKey> partitions, String member) {
    String op = "acquire(group " + group + ", member " + member + ")";
    if (partitions.isEmpty()) {
      return new ArrayList<>();
    }
    List<String> args = new ArrayList<>(partitions.size() + 1);
    args.add(member(member));
    for (PartitionKey p : partitions) {
      args.add(Keys.field(p));
    }
    List<Object> epochs =
        Values.list(
            run(
                op,
                Script.ACQUIRE,
                ScriptOutputType.MULTI,
                leases(group),
                args.toArray(String[]::new)));
    if (epochs.size() != partitions.size()) {
      throw calls.failure(
          op, "Redis returned " + epochs.size() + " epochs for " + partitions.size() + " leases");
    }
    List<OptionalLong> out = new ArrayList<>(epochs.size());
    for (Object e : epochs) {
      long epoch = Values.epoch(e);
      out.add(epoch < 0 ? OptionalLong.empty() : OptionalLong.of(epoch));
    }
    return out;
  }

  @Override
  public boolean markReleasing(String group, PartitionKey partition, String member, long epoch) {
    String op = "markReleasing(group " + group + ", " + partition + ", member " + member + ")";
    return heldBy(op, Script.MARK_RELEASING, group, partition, member, epoch);
  }

  @Override
  public boolean release(String group, PartitionKey partition, String member, long epoch) {
    String op = "release(group " + group + ", " + partition + ", member " + member + ")";
    return heldBy(op, Script.RELEASE, group, partition, member, epoch);
  }

  /** Runs a script that changes the lease only if {@code member} holds it at {@code epoch}. */
  private boolean heldBy(
      String op, Script script, String group, PartitionKey p, String member, long epoch) {
    Object changed =
        run(
            op,
            script,
            ScriptOutputType.INTEGER,
            leases(group),
            Keys.field(p),
            member(member),
            Long.toString(epoch));
    return count(changed) == 1;
  }

  @Override
  public int reclaim(String group, Set<String> liveMembers, Duration grace) {
    String op = "reclaim(group " + group + ")";
    if (grace == null || grace.isNegative()) {
      throw new ValidationException("reclaim grace must not be negative, got " + grace);
    }
    List<String> args = new ArrayList<>(liveMembers.size() + 1);
    args.add(Long.toString(bounded("reclaim grace", grace).toMillis()));
    args.addAll(liveMembers);
    return count(
        run(
            op,
            Script.RECLAIM,
            ScriptOutputType.INTEGER,
            leases(group),
            args.toArray(String[]::new)));
  }

  @Override
  public int forceRelease(String group, Collection<PartitionKey> partitions) {
    String op = "forceRelease(group " + group + ")";
    if (partitions.isEmpty()) {
      return 0;
    }
    String[] fields = partitions.stream().map(Keys::field).toArray(String[]::new);
    return count(run(op, Script.FORCE_RELEASE, ScriptOutputType.INTEGER, leases(group), fields));
  }

  // ------------------------------------------------------------------ policies

  @Override
  public GroupPolicy policy(String group) {
    String op = "policy(group " + group + ")";
    String field = Keys.policyField(group);
    // The group's override comes first, then the cluster default: one read.
    List<KeyValue<String, String>> found =
        calls.await(op, commands(op).hmget(keys.policies(), field, ""));
    for (KeyValue<String, String> kv : found) {
      if (kv.hasValue()) {
        String where =
            "policy at key " + keys.policies() + ", field '" + kv.getKey() + "' (" + op + ")";
        return Values.policy(where, kv.getValue());
      }
    }
    return GroupPolicy.DEFAULT;
  }

  @Override
  public void setPolicy(Optional<String> group, Optional<GroupPolicy> policy) {
    String op = "setPolicy(" + group.map(g -> "group " + g).orElse("cluster default") + ")";
    String field = group.map(Keys::policyField).orElse("");
    String[] args =
        policy.isPresent()
            ? new String[] {field, Values.policy(policy.get())}
            : new String[] {field};
    run(
        op,
        Script.SET_POLICY,
        ScriptOutputType.INTEGER,
        new String[] {keys.policies(), keys.policyStamp()},
        args);
  }

  // ------------------------------------------------------------------ lifecycle

  /**
   * Closes the connection and shuts the client down within a few seconds. Members that checked in
   * through this store stay until their deadline (the engine calls {@link #leave} first when it
   * stops). Safe to call twice.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      // Shutting the client down closes its connection too.
      client
          .shutdownAsync(0, CLOSE_BOUND.toMillis(), TimeUnit.MILLISECONDS)
          .get(CLOSE_BOUND.toMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (TimeoutException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "{0}: the Redis client did not shut down within {1}; leaving it to finish in the"
              + " background",
          description,
          CLOSE_BOUND);
    } catch (Exception e) {
      LOG.log(
          System.Logger.Level.DEBUG, "{0}: error shutting the client down: {1}", description, e);
    }
  }

  // ------------------------------------------------------------------ helpers

  /** The connection's commands, connecting first if need be (bounded by the timeout). */
  private RedisAsyncCommands<String, String> commands(String op) {
    ensureOpen(op);
    StatefulRedisConnection<String, String> c = connection;
    if (c != null) {
      return c.async();
    }
    synchronized (connecting) {
      ensureOpen(op);
      if (connection == null) {
        try {
          connection = client.connect(StringCodec.UTF8);
        } catch (RuntimeException e) {
          // Nothing is kept: the next call tries again.
          throw calls.failure(op, e);
        }
      }
      return connection.async();
    }
  }

  private Object run(
      String op, Script script, ScriptOutputType type, String[] scriptKeys, String... args) {
    RedisAsyncCommands<String, String> c = commands(op);
    RedisFuture<Object> sent = c.evalsha(script.sha(), type, scriptKeys, args);
    return finish(op, c, sent, script, type, scriptKeys, args);
  }

  /** The script's answer; its text is sent only when Redis does not know it (NOSCRIPT). */
  private Object finish(
      String op,
      RedisAsyncCommands<String, String> c,
      RedisFuture<Object> sent,
      Script script,
      ScriptOutputType type,
      String[] scriptKeys,
      String[] args) {
    try {
      return calls.await(op, sent);
    } catch (StoreException e) {
      if (!Calls.noScript(e)) {
        throw e;
      }
      RedisFuture<Object> again = c.eval(script.source(), type, scriptKeys, args);
      return calls.await(op, again);
    }
  }

  private long stamp(String op, RedisFuture<String> f) {
    String v = calls.await(op, f);
    try {
      return v == null ? 0 : Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw calls.failure(op, "unreadable policy stamp at key " + keys.policyStamp() + ": " + v);
    }
  }

  private String[] leases(String group) {
    return new String[] {keys.group(group).leases()};
  }

  private static String member(String id) {
    return Keys.member(id);
  }

  private static int count(Object reply) {
    return ((Long) reply).intValue();
  }

  /** Whole milliseconds of a positive {@code d}, at least 1 (a shorter one would be none). */
  private static long millis(String what, Duration d) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new ValidationException(what + " must be a positive duration, got " + d);
    }
    return Math.max(1, bounded(what, d).toMillis());
  }

  private static Duration bounded(String what, Duration d) {
    if (d.compareTo(MAX_DURATION) > 0) {
      throw new ValidationException(what + " must be at most 36500 days, got " + d);
    }
    return d;
  }

  private void ensureOpen(String op) {
    if (closed.get()) {
      throw calls.failure(op, "the store is closed");
    }
  }
}
