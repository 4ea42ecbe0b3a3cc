package io.boxline.server.internal;

import io.boxline.spi.CoordinationStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.PartitionKey;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The Kafka listeners of every server instance on one database, as one Kafka cluster: each instance
 * is a broker with a node id, and each consumer group has one coordinating instance. Both are
 * leases in the database's coordination tables, under the group name {@value #GROUP}, which no
 * subscription can have: node id k is the lease of pseudo-partition (-1, k); the groups whose name
 * hashes to bucket b are coordinated by the holder of pseudo-partition (-2, b), taken by the first
 * instance asked for the group's coordinator. An instance checks in every fifth of {@code ttl} (the
 * loop {@code boxline-kafka-cluster}); when it stops, the others take its node id and its groups
 * after {@code ttl}, and the groups' members join again there. An instance coordinates only while
 * its last check-in is less than half of {@code ttl} old, so two instances never coordinate one
 * group at once: the next may take the lease only once the whole {@code ttl} has passed.
 */
final class KafkaCluster implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger("io.boxline.server.kafka");

  /** The coordination group of the Kafka listeners: not a name a subscription can have. */
  static final String GROUP = "$kafka";

  private static final long NODES = -1;
  private static final long COORDINATORS = -2;

  /** Buckets the groups are hashed to, each coordinated by one instance. */
  static final int BUCKETS = 64;

  /** Node ids are 0 to this, less one. */
  static final int MAX_NODES = 1024;

  /** A broker as metadata answers name it. */
  record Node(int id, String host, int port) {}

  /** What the last check-in saw. */
  private record Seen(
      long checkedInAt, int nodeId, Map<Integer, Node> nodes, Map<Integer, String> coordinators) {}

  private final CoordinationStore coordination;
  private final String memberId;
  private final String host;
  private final int port;
  private final Duration ttl;
  private final LongSupplier nanos;
  private final ScheduledExecutorService loop;

  /** Buckets taken since the check-in that {@link #seen} holds began: bucket to when. */
  private final Map<Integer, Long> taken = new ConcurrentHashMap<>();

  private volatile Seen seen;
  private volatile boolean failing;
  private boolean closed;
  final AtomicLong checkIns = new AtomicLong();
  final AtomicLong checkInFailures = new AtomicLong();

  KafkaCluster(
      CoordinationStore coordination, String host, int port, Duration ttl, LongSupplier nanos) {
    this.coordination = coordination;
    this.host = host;
    this.port = port;
    this.ttl = ttl;
    this.nanos = nanos;
    this.memberId = UUID.randomUUID() + "@" + host + ":" + port;
    this.loop =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "boxline-kafka-cluster");
              t.setDaemon(true);
              return t;
            });
  }

  /** Checks in (failing if the database does not answer), then every fifth of the ttl. */
  KafkaCluster start() {
    checkIn();
    long every = Math.max(100, ttl.toMillis() / 5);
    loop.scheduleWithFixedDelay(this::checkInQuietly, every, every, TimeUnit.MILLISECONDS);
    return this;
  }

  private void checkInQuietly() {
    try {
      checkIn();
      if (failing) {
        failing = false;
        LOG.log(Level.INFO, "Kafka cluster: checking in works again");
      }
    } catch (RuntimeException e) {
      checkInFailures.incrementAndGet();
      if (!failing) {
        failing = true;
        LOG.log(
            Level.WARNING,
            "Kafka cluster: checking in failed; groups are not coordinated here until it works"
                + " again",
            e);
      }
    }
  }

  /** One check-in: renews this instance, frees the leases of gone ones, keeps a node id. */
  void checkIn() {
    long started = nanos.getAsLong();
    GroupView view = coordination.checkIn(GROUP, memberId, 1.0, ttl);
    Set<String> live = new HashSet<>();
    view.members().forEach(m -> live.add(m.id()));
    if (view.leases().stream().anyMatch(l -> !live.contains(l.owner()))) {
      coordination.reclaim(GROUP, live, ttl);
      view = coordination.view(GROUP);
    }
    int nodeId = -1;
    Set<Integer> held = new HashSet<>();
    for (Lease l : view.leases()) {
      if (l.topicId() == NODES && live.contains(l.owner())) {
        held.add(l.partition());
        if (l.owner().equals(memberId)) {
          nodeId = l.partition();
        }
      }
    }
    for (int k = 0; nodeId < 0 && k < MAX_NODES; k++) {
      if (!held.contains(k) && won(new PartitionKey(NODES, k))) {
        nodeId = k;
      }
    }
    if (nodeId < 0) {
      throw new IllegalStateException(
          "all " + MAX_NODES + " Kafka node ids are taken by live server instances");
    }
    Map<Integer, Node> nodes = new TreeMap<>();
    Map<Integer, String> coordinators = new HashMap<>();
    for (Lease l : view.leases()) {
      if (l.owner() == null || !live.contains(l.owner())) {
        continue;
      }
      if (l.topicId() == NODES) {
        address(l.owner()).ifPresent(a -> nodes.put(l.partition(), node(l.partition(), a)));
      } else if (l.topicId() == COORDINATORS) {
        coordinators.put(l.partition(), l.owner());
      }
    }
    nodes.put(nodeId, new Node(nodeId, host, port));
    taken.values().removeIf(at -> at - started < 0);
    seen = new Seen(started, nodeId, Map.copyOf(nodes), Map.copyOf(coordinators));
    checkIns.incrementAndGet();
  }

  private boolean won(PartitionKey key) {
    List<OptionalLong> got = coordination.acquire(GROUP, List.of(key), memberId);
    return !got.isEmpty() && got.get(0).isPresent();
  }

  /** {@code host:port} of an instance, from its member id. */
  private static Optional<String> address(String member) {
    int at = member.indexOf('@');
    return at < 0 ? Optional.empty() : Optional.of(member.substring(at + 1));
  }

  private static Node node(int id, String address) {
    int colon = address.lastIndexOf(':');
    return new Node(
        id, address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)));
  }

  static int bucket(String group) {
    return Math.floorMod(group.hashCode(), BUCKETS);
  }

  /** This instance's node id. */
  int nodeId() {
    return seen.nodeId();
  }

  /** This instance as a broker. */
  Node self() {
    return seen.nodes().get(seen.nodeId());
  }

  /** The live instances, by node id; this one among them. */
  List<Node> nodes() {
    return new ArrayList<>(seen.nodes().values());
  }

  /**
   * The instance that coordinates the group: the holder of its bucket, or this instance, which
   * takes the bucket when nobody holds it. Empty while the holder has no node id yet.
   */
  Optional<Node> coordinator(String group) {
    int b = bucket(group);
    Seen s = seen;
    String owner = taken.containsKey(b) ? memberId : s.coordinators().get(b);
    if (owner == null) {
      if (won(new PartitionKey(COORDINATORS, b))) {
        taken.put(b, nanos.getAsLong());
        LOG.log(Level.DEBUG, "Kafka cluster: coordinating the groups of bucket " + b);
        return Optional.of(self());
      }
      GroupView view = coordination.view(GROUP);
      owner =
          view.leases().stream()
              .filter(l -> l.topicId() == COORDINATORS && l.partition() == b)
              .map(Lease::owner)
              .findFirst()
              .orElse(null);
    }
    if (memberId.equals(owner)) {
      return Optional.of(self());
    }
    String holder = owner;
    return s.nodes().values().stream()
        .filter(n -> holder != null && address(holder).orElse("").equals(n.host() + ":" + n.port()))
        .findFirst();
  }

  /** Whether this instance holds the group's bucket now, without taking it when free. */
  boolean holds(String group) {
    Seen s = seen;
    if (closed || nanos.getAsLong() - s.checkedInAt() > ttl.toNanos() / 2) {
      return false;
    }
    int b = bucket(group);
    return taken.containsKey(b) || memberId.equals(s.coordinators().get(b));
  }

  /**
   * Whether this instance coordinates the group now (see the class's comment); it takes the group's
   * bucket when nobody holds it, as for a client that did not ask FindCoordinator first.
   */
  boolean coordinates(String group) {
    if (holds(group)) {
      return true;
    }
    Seen s = seen;
    int b = bucket(group);
    if (!closed
        && nanos.getAsLong() - s.checkedInAt() <= ttl.toNanos() / 2
        && s.coordinators().get(b) == null
        && won(new PartitionKey(COORDINATORS, b))) {
      taken.put(b, nanos.getAsLong());
      return true;
    }
    return false;
  }

  /**
   * Whether this instance lists the group (ListGroups goes to every broker, and each group must
   * come once): its coordinator does, or, where there is none, the live instance of the lowest node
   * id.
   */
  boolean lists(String group) {
    Seen s = seen;
    int b = bucket(group);
    if (taken.containsKey(b)) {
      return true;
    }
    String owner = s.coordinators().get(b);
    return owner != null
        ? owner.equals(memberId)
        : s.nodes().keySet().iterator().next() == s.nodeId();
  }

  /** Stops checking in and leaves: the other instances take this one's groups at once. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    loop.shutdownNow();
    try {
      loop.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      coordination.leave(GROUP, memberId);
    } catch (RuntimeException e) {
      LOG.log(
          Level.WARNING,
          "Kafka cluster: leaving failed; the other instances take over after " + ttl,
          e);
    }
  }
}
