package io.boxline.etcd;

import io.boxline.GroupPolicy;
import io.boxline.StoreException;
import io.boxline.ValidationException;
import io.boxline.etcd.internal.Calls;
import io.boxline.etcd.internal.Keys;
import io.boxline.etcd.internal.Values;
import io.boxline.etcd.internal.Values.Slot;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.MemberStatus;
import io.boxline.spi.PartitionKey;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Consumer-group coordination in etcd v3, for deployments that want membership and lease traffic
 * off the database. Cursors (and therefore fencing) stay in the database; this store only hands out
 * leases and epochs.
 *
 * <p>Mapping onto etcd (key layout in {@link Keys}, values in {@link Values}, the members' etcd
 * leases in {@code MemberLeases}, the partition leases in {@code PartitionLeases}):
 *
 * <ul>
 *   <li><b>Members</b> are keys attached to an etcd lease whose TTL is the check-in TTL rounded up
 *       to whole seconds (etcd's unit; the server may raise it to its minimum, about 2 s with
 *       default election settings). etcd deletes the key when the lease expires, so the live
 *       members are the member keys that exist. A check-in renews this client's etcd lease
 *       (keep-alive) and, in the same moment, sends one transaction that puts the member key and
 *       reads the whole group (members and leases): two requests in flight together, one round trip
 *       of latency. The first check-in, a changed TTL, or an expired etcd lease costs one extra
 *       round trip (grant a new etcd lease).
 *   <li><b>Partition leases</b> are one key per partition holding owner, epoch, releasing flag and
 *       time. A free lease keeps its key (owner null) so the epoch survives. Acquisition is one
 *       range read of the group's leases, then one transaction per wanted partition, all in flight
 *       together: {@code If(mod_revision == seen)} (or {@code create_revision == 0} for a new key)
 *       {@code Then(put owner, epoch)}; exactly one contender's transaction applies. Every change
 *       to a lease is such a compare-and-set on the key's mod revision.
 *   <li><b>Epochs</b> only grow: a new partition key starts at the client clock in microseconds,
 *       and each acquisition takes {@code max(previous + 1, clock in microseconds)}. So a wiped or
 *       restored etcd does not hand out an epoch lower than one a cursor in the database has seen
 *       (as long as clocks do not run backwards by more than the time since that cursor's claim).
 *   <li><b>Policies</b> are JSON values under {@code policies/} (cluster default and per-group
 *       override), read together in one transaction.
 * </ul>
 *
 * <p><b>Clock.</b> etcd has no clock that clients can read, so {@link GroupView#now()}, a lease's
 * {@code since}, and the grace period of {@link #reclaim} use this client's clock. Member liveness
 * does not depend on client clocks (etcd expires the members); only the RELEASING grace period is
 * affected by skew between hosts, by the size of the skew.
 *
 * <p>Every call is bounded by the request timeout and every failure is a {@link StoreException}
 * naming the operation and the endpoints.
 */
public final class EtcdCoordination implements CoordinationStore {
  public static final String DEFAULT_KEY_PREFIX = "/boxline/";
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(5);

  private static final System.Logger LOG = System.getLogger(EtcdCoordination.class.getName());

  private static final Duration CLOSE_BOUND = Duration.ofSeconds(5);
  private static final int MAX_RESPONSE_BYTES = 64 << 20;

  private final Client client;
  private final KV kv;
  private final Keys keys;
  private final Calls calls;
  private final Clock clock;
  private final String endpoints;
  private final String description;

  /** The partition leases: the compare-and-set half of this store. */
  private final PartitionLeases partitionLeases;

  /** The etcd leases that keep this client's member keys alive. */
  private final MemberLeases memberLeases;

  private volatile boolean closed;

  private EtcdCoordination(Builder b) {
    this.endpoints = String.join(",", b.endpoints);
    this.keys = new Keys(b.keyPrefix);
    this.calls = new Calls(endpoints, b.requestTimeout);
    this.clock = Clock.systemUTC();
    this.description = "etcd coordination (" + endpoints + ", prefix " + keys.prefix() + ")";
    try {
      ClientBuilder cb =
          Client.builder()
              .endpoints(b.endpoints.toArray(String[]::new))
              .connectTimeout(b.connectTimeout)
              .retryMaxDuration(b.requestTimeout)
              .interceptor(deadline(b.requestTimeout))
              // A check-in reads the whole group; leave room beyond gRPC's 4 MiB default.
              .maxInboundMessageSize(MAX_RESPONSE_BYTES);
      if (b.user != null) {
        cb.user(ByteSequence.from(b.user, StandardCharsets.UTF_8))
            .password(ByteSequence.from(b.password, StandardCharsets.UTF_8));
      }
      if (b.tls) {
        cb.sslContext(
            ssl -> {
              if (b.trustedCertificates != null) {
                ssl.trustManager(b.trustedCertificates.toFile());
              }
              if (b.clientCertificate != null) {
                ssl.keyManager(b.clientCertificate.toFile(), b.clientKey.toFile());
              }
            });
      }
      this.client = cb.build();
    } catch (javax.net.ssl.SSLException | RuntimeException e) {
      throw new StoreException(calls.message("connect", String.valueOf(e.getMessage())), e);
    }
    this.kv = client.getKVClient();
    this.memberLeases = new MemberLeases(client.getLeaseClient(), calls);
    this.partitionLeases = new PartitionLeases(kv, keys, calls, clock, this::ensureOpen);
  }

  /**
   * Gives every gRPC call a deadline, so a call this store gave up on (etcd unreachable) does not
   * stay queued in the client until the connection comes back.
   */
  private static ClientInterceptor deadline(Duration timeout) {
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(
          MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return next.newCall(
            method, options.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS));
      }
    };
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Settings of an {@link EtcdCoordination}. */
  public static final class Builder {
    private final List<String> endpoints = new ArrayList<>();
    private String keyPrefix = DEFAULT_KEY_PREFIX;
    private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
    private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
    private String user;
    private String password;
    private boolean tls;
    private Path trustedCertificates;
    private Path clientCertificate;
    private Path clientKey;

    private Builder() {}

    /**
     * Client URLs of the etcd cluster, e.g. {@code http://127.0.0.1:2379}, or {@code https://…} for
     * TLS (then all of them); a comma-separated list in one string is accepted too.
     */
    public Builder endpoints(String... urls) {
      return endpoints(Arrays.asList(urls));
    }

    public Builder endpoints(Collection<String> urls) {
      endpoints.clear();
      for (String u : urls) {
        if (u == null) {
          throw new ValidationException("etcd endpoint must not be null");
        }
        for (String part : u.split(",")) {
          if (!part.isBlank()) {
            endpoints.add(validateEndpoint(part.strip()));
          }
        }
      }
      return this;
    }

    /**
     * Prefix of every key this store writes (default {@value #DEFAULT_KEY_PREFIX}); starts and ends
     * with {@code /}. Deployments sharing an etcd cluster use different prefixes.
     */
    public Builder keyPrefix(String prefix) {
      this.keyPrefix = Keys.validatePrefix(prefix);
      return this;
    }

    /** How long to wait for a connection to an endpoint (default 5 s). */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = positive("connectTimeout", timeout);
      return this;
    }

    /** Bound of every call to etcd (default 5 s); a call that takes longer fails. */
    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = positive("requestTimeout", timeout);
      return this;
    }

    /**
     * Authenticates as this etcd user (etcd's {@code auth enable}); use it with TLS, or the
     * password crosses the network in clear text. The user needs read and write permission on the
     * key prefix.
     */
    public Builder user(String name, String password) {
      if (name == null || name.isBlank() || password == null || password.isEmpty()) {
        throw new ValidationException("etcd user name and password must not be empty");
      }
      this.user = name;
      this.password = password;
      return this;
    }

    /**
     * PEM file of the certificate authorities that sign the etcd servers' certificates (with {@code
     * https://} endpoints; default: the JVM's trusted authorities).
     */
    public Builder trustedCertificates(Path pemFile) {
      this.trustedCertificates = readable("trustedCertificates", pemFile);
      return this;
    }

    /**
     * The client's own certificate chain and PKCS#8 private key (PEM files), for etcd servers that
     * require client certificates ({@code --client-cert-auth}); with {@code https://} endpoints.
     */
    public Builder clientCertificate(Path certificateChain, Path privateKey) {
      this.clientCertificate = readable("clientCertificate", certificateChain);
      this.clientKey = readable("clientCertificate's private key", privateKey);
      return this;
    }

    /** A client for these settings; it connects lazily, on the first call. */
    public EtcdCoordination build() {
      if (endpoints.isEmpty()) {
        throw new ValidationException(
            "etcd coordination needs at least one endpoint, e.g. http://127.0.0.1:2379");
      }
      long secure = endpoints.stream().filter(u -> u.startsWith("https:")).count();
      if (secure != 0 && secure != endpoints.size()) {
        throw new ValidationException(
            "etcd endpoints must all be http:// or all https://, got " + endpoints);
      }
      tls = secure != 0;
      if (!tls && (trustedCertificates != null || clientCertificate != null)) {
        throw new ValidationException(
            "trustedCertificates and clientCertificate need https:// etcd endpoints, got "
                + endpoints);
      }
      return new EtcdCoordination(this);
    }

    private static Path readable(String name, Path file) {
      if (file == null || !Files.isReadable(file)) {
        throw new ValidationException(name + " must be a readable PEM file, got " + file);
      }
      return file;
    }

    private static Duration positive(String name, Duration d) {
      if (d == null || d.isNegative() || d.isZero()) {
        throw new ValidationException(name + " must be a positive duration, got " + d);
      }
      return d;
    }

    private static String validateEndpoint(String url) {
      URI uri;
      try {
        uri = URI.create(url);
      } catch (IllegalArgumentException e) {
        throw new ValidationException("etcd endpoint is not a URL: '" + url + "'");
      }
      if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme())) {
        throw new ValidationException(
            "etcd endpoint must be an http:// or https:// URL, got '" + url + "'");
      }
      if (uri.getHost() == null || uri.getPort() < 0) {
        throw new ValidationException(
            "etcd endpoint needs a host and a port, e.g. http://127.0.0.1:2379, got '" + url + "'");
      }
      return url;
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
    ensureOpen(op);
    if (ttl == null || ttl.isNegative() || ttl.isZero()) {
      throw new ValidationException("check-in ttl must be a positive duration, got " + ttl);
    }
    long ttlSeconds = Math.max(1, (ttl.toMillis() + 999) / 1000);
    ByteSequence key = keys.member(group, member);
    ByteSequence value = Values.member(new Member(member, weight, null, null, status));
    TxnResponse read =
        memberLeases.write(
            op, group, member, ttlSeconds, leaseId -> putAndRead(group, key, value, leaseId));
    return view(group, read, clock.instant());
  }

  private CompletableFuture<TxnResponse> putAndRead(
      String group, ByteSequence key, ByteSequence value, long leaseId) {
    ByteSequence groupPrefix = keys.group(group);
    return kv.txn()
        .Then(
            Op.put(key, value, PutOption.builder().withLeaseId(leaseId).build()),
            Op.get(groupPrefix, Keys.prefixRange(groupPrefix)),
            // The policy keys' revisions make the policy stamp: members re-read the policy when
            // it changes, not every tenth check-in.
            Op.get(keys.groupPolicy(group), KEYS_ONLY),
            Op.get(keys.clusterPolicy(), KEYS_ONLY))
        .commit();
  }

  private static final GetOption KEYS_ONLY = GetOption.builder().withKeysOnly(true).build();

  /** Changes whenever either policy key is written or deleted (mod revisions only grow). */
  private static long policyStamp(TxnResponse read) {
    long group = modRevision(read.getGetResponses().get(1));
    long cluster = modRevision(read.getGetResponses().get(2));
    return 31 * group + cluster;
  }

  private static long modRevision(GetResponse r) {
    return r.getKvs().isEmpty() ? 0 : r.getKvs().get(0).getModRevision();
  }

  private GroupView view(String group, TxnResponse read, Instant now) {
    GetResponse range = read.getGetResponses().get(0);
    String membersPath = keys.membersPath(group);
    String leasesPath = keys.leasesPath(group);
    List<Member> members = new ArrayList<>();
    List<Lease> leases = new ArrayList<>();
    for (KeyValue e : range.getKvs()) {
      String k = e.getKey().toString(StandardCharsets.UTF_8);
      if (k.startsWith(membersPath)) {
        members.add(Values.member(e));
      } else if (k.startsWith(leasesPath)) {
        Slot s = Values.slot(e);
        if (s.held()) {
          leases.add(s.toLease());
        }
      }
    }
    return new GroupView(members, leases, now, policyStamp(read));
  }

  /** One read of the group's keys; etcd records no check-in times (members live on leases). */
  @Override
  public GroupView view(String group) {
    String op = "view(group " + group + ")";
    ensureOpen(op);
    ByteSequence groupPrefix = keys.group(group);
    TxnResponse read =
        calls.await(
            op,
            kv.txn()
                .Then(
                    Op.get(groupPrefix, Keys.prefixRange(groupPrefix)),
                    Op.get(keys.groupPolicy(group), KEYS_ONLY),
                    Op.get(keys.clusterPolicy(), KEYS_ONLY))
                .commit());
    return view(group, read, clock.instant());
  }

  @Override
  public void leave(String group, String member) {
    String op = "leave(group " + group + ", member " + member + ")";
    ensureOpen(op);
    CompletableFuture<?> delete = kv.delete(keys.member(group, member));
    int freed = partitionLeases.freeWhere(op, group, s -> member.equals(s.owner()));
    calls.await(op, delete);
    memberLeases.forget(group, member);
    LOG.log(System.Logger.Level.DEBUG, "{0}: freed {1} leases", op, freed);
  }

  // ------------------------------------------------------------------ leases

  @Override
  public List<java.util.OptionalLong> acquire(
      String group, List<PartitionKey> partitions, String member) {
    List<java.util.OptionalLong> out = new java.util.ArrayList<>(partitions.size());
    for (long epoch : partitionLeases.acquire(group, partitions, member)) {
      out.add(epoch < 0 ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(epoch));
    }
    return out;
  }

  @Override
  public boolean markReleasing(String group, PartitionKey partition, String member, long epoch) {
    return partitionLeases.markReleasing(group, partition, member, epoch);
  }

  @Override
  public boolean release(String group, PartitionKey partition, String member, long epoch) {
    return partitionLeases.release(group, partition, member, epoch);
  }

  @Override
  public int reclaim(String group, Set<String> liveMembers, Duration grace) {
    return partitionLeases.reclaim(group, liveMembers, grace);
  }

  @Override
  public List<String> liveMembers(String group) {
    String op = "liveMembers(group " + group + ")";
    ensureOpen(op);
    // Member keys live on etcd leases: a key that exists belongs to a member that is alive.
    ByteSequence prefix = Keys.bytes(keys.membersPath(group));
    GetResponse r = calls.await(op, kv.get(prefix, Keys.prefixRange(prefix)));
    List<String> live = new ArrayList<>();
    for (KeyValue e : r.getKvs()) {
      live.add(Values.member(e).id());
    }
    live.sort(null);
    return live;
  }

  @Override
  public int forceRelease(String group, Collection<PartitionKey> partitions) {
    return partitionLeases.forceRelease(group, partitions);
  }

  // ------------------------------------------------------------------ policies

  @Override
  public GroupPolicy policy(String group) {
    String op = "policy(group " + group + ")";
    ensureOpen(op);
    TxnResponse r =
        calls.await(
            op,
            kv.txn()
                .Then(
                    Op.get(keys.groupPolicy(group), GetOption.DEFAULT),
                    Op.get(keys.clusterPolicy(), GetOption.DEFAULT))
                .commit());
    for (GetResponse g : r.getGetResponses()) {
      if (!g.getKvs().isEmpty()) {
        return Values.policy(g.getKvs().get(0));
      }
    }
    return GroupPolicy.DEFAULT;
  }

  @Override
  public void setPolicy(Optional<String> group, Optional<GroupPolicy> policy) {
    String op = "setPolicy(" + group.map(g -> "group " + g).orElse("cluster default") + ")";
    ensureOpen(op);
    ByteSequence key = group.map(keys::groupPolicy).orElseGet(keys::clusterPolicy);
    if (policy.isPresent()) {
      calls.await(op, kv.put(key, Values.policy(policy.get())));
    } else {
      calls.await(op, kv.delete(key, DeleteOption.DEFAULT));
    }
  }

  // ------------------------------------------------------------------ lifecycle

  /**
   * Revokes the etcd leases of members checked in through this client (their keys go at once: a
   * closed store cannot keep them alive) and shuts the client down, each within a few seconds. Safe
   * to call twice.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    List<CompletableFuture<?>> revocations = memberLeases.revokeAll();
    try {
      CompletableFuture.allOf(revocations.toArray(CompletableFuture[]::new))
          .get(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.log(
          System.Logger.Level.DEBUG,
          "{0}: could not revoke member leases on close; they expire by themselves: {1}",
          description,
          e.toString());
    }
    Thread closer = new Thread(client::close, "boxline-etcd-close");
    closer.setDaemon(true);
    closer.start();
    try {
      closer.join(CLOSE_BOUND.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (closer.isAlive()) {
      LOG.log(
          System.Logger.Level.WARNING,
          "{0}: the etcd client did not shut down within {1}; leaving it to finish in the"
              + " background",
          description,
          CLOSE_BOUND);
    }
  }

  // ------------------------------------------------------------------ helpers

  private void ensureOpen(String op) {
    if (closed) {
      throw calls.failure(op, "the store is closed");
    }
  }
}
