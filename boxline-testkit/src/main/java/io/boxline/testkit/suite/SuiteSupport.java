package io.boxline.testkit.suite;

import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.PartitionLag;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** Helpers shared by the behaviour suites. */
public final class SuiteSupport {
  public static final Duration WAIT = Duration.ofSeconds(30);

  private SuiteSupport() {}

  public static TopicName topic(Boxline boxline, String fullName, int partitions) {
    return topic(boxline, fullName, partitions, io.boxline.Sequencing.SEQUENCER);
  }

  public static TopicName topic(
      Boxline boxline, String fullName, int partitions, io.boxline.Sequencing sequencing) {
    TopicName t = TopicName.parse(fullName);
    boxline.admin().createNamespace(t.namespace());
    boxline.admin().createTopic(t, partitions, sequencing);
    return t;
  }

  public static void subscribe(Boxline boxline, String name, TopicName... topics) {
    boxline.admin().createSubscription(SubscriptionSpec.of(name, topics));
  }

  /** Subscribes {@code name} to {@code topics} and starts a consumer that records what it gets. */
  public static Recorder record(Boxline boxline, String name, TopicName... topics) {
    subscribe(boxline, name, topics);
    Recorder seen = new Recorder();
    boxline.consumer(name).handler(seen::record).start();
    return seen;
  }

  /** A key that lands on {@code partition} of a topic with {@code partitions} partitions. */
  public static String keyFor(int partition, int partitions) {
    for (int i = 0; ; i++) {
      String k = "k" + i;
      if (io.boxline.Partitioner.kafkaCompatible().partition(k, partitions) == partition) {
        return k;
      }
    }
  }

  /**
   * Holds a handler until the test counts {@code release} down (at most {@link #WAIT}); keeps the
   * interrupt of a consumer that abandons the batch.
   */
  public static void awaitRelease(java.util.concurrent.CountDownLatch release) {
    try {
      release.await(WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * {@link io.boxline.spi.CursorStore#fenceCursors} with the epochs in partition order; the
   * positions, -1 where refused (the contract suites compare arrays).
   */
  public static long[] fence(
      io.boxline.spi.Store store,
      long subscriptionId,
      List<io.boxline.spi.PartitionKey> partitions,
      long[] epochs,
      String owner) {
    List<io.boxline.spi.Fence> fences = new java.util.ArrayList<>();
    for (int i = 0; i < partitions.size(); i++) {
      fences.add(new io.boxline.spi.Fence(partitions.get(i), epochs[i]));
    }
    return orMinusOne(store.fenceCursors(subscriptionId, fences, owner));
  }

  /** {@link io.boxline.spi.CoordinationStore#acquire}: the epochs, -1 where refused. */
  public static long[] acquire(
      io.boxline.spi.CoordinationStore store,
      String group,
      List<io.boxline.spi.PartitionKey> partitions,
      String member) {
    return orMinusOne(store.acquire(group, partitions, member));
  }

  private static long[] orMinusOne(List<java.util.OptionalLong> values) {
    return values.stream().mapToLong(v -> v.orElse(-1)).toArray();
  }

  /**
   * Settles one move with its parks ({@link io.boxline.spi.CursorStore#settle}), as a delivery
   * does.
   */
  public static io.boxline.spi.CommitOutcome settle(
      io.boxline.spi.Store store,
      long subscriptionId,
      io.boxline.spi.PartitionKey partition,
      long expectedPosition,
      long position,
      long epoch,
      List<io.boxline.spi.Park> parks) {
    return store
        .settle(
            subscriptionId,
            List.of(
                io.boxline.spi.Settlement.move(partition, epoch, expectedPosition, position)
                    .parking(parks)))
        .get(0);
  }

  /** Like {@link #settle}, for events handed over in memory that the log must still hold. */
  public static io.boxline.spi.CommitOutcome settleHeld(
      io.boxline.spi.Store store,
      long subscriptionId,
      io.boxline.spi.PartitionKey partition,
      long expectedPosition,
      long position,
      long epoch,
      List<io.boxline.spi.Park> parks,
      long[] sequences,
      java.util.UUID[] ids) {
    return store
        .settle(
            subscriptionId,
            List.of(
                io.boxline.spi.Settlement.move(partition, epoch, expectedPosition, position)
                    .parking(parks)
                    .holding(held(sequences, ids))))
        .get(0);
  }

  /** Events handed over in memory, by sequence and id. */
  public static List<io.boxline.spi.Settlement.HeldEvent> held(
      long[] sequences, java.util.UUID[] ids) {
    List<io.boxline.spi.Settlement.HeldEvent> held = new java.util.ArrayList<>();
    for (int i = 0; i < sequences.length; i++) {
      held.add(new io.boxline.spi.Settlement.HeldEvent(sequences[i], ids[i]));
    }
    return held;
  }

  public static OutgoingEvent raw(TopicName topic, String key, String body) {
    return OutgoingEvent.builder(topic)
        .type("test.event")
        .key(key)
        .contentType("text/plain")
        .payload(body.getBytes(StandardCharsets.UTF_8))
        .build();
  }

  public static String body(Event e) {
    return new String(e.payload(), StandardCharsets.UTF_8);
  }

  /** Publishes {@code count} raw events, one transaction each. */
  public static void publish(Boxline boxline, TopicName topic, String keyPrefix, int count) {
    for (int i = 0; i < count; i++) {
      String key = keyPrefix == null ? null : keyPrefix + (i % 7);
      String b = (keyPrefix == null ? "e" : keyPrefix) + "-" + i;
      boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(topic, key, b)));
    }
  }

  /** Waits until every partition of the subscription has handled everything sequenced. */
  public static void awaitCaughtUp(Boxline boxline, String subscription) {
    Await.until(
        WAIT,
        "subscription " + subscription + " caught up",
        () -> boxline.admin().lag(subscription),
        lags -> lags.stream().allMatch(l -> l.backlog() == 0));
  }

  /** Waits until the subscription's partitions hold {@code events} events in all. */
  public static void awaitSequenced(Boxline boxline, String subscription, long events) {
    Await.until(
        WAIT,
        events + " events sequenced",
        () ->
            boxline.admin().lag(subscription).stream().mapToLong(PartitionLag::lastSequence).sum()
                == events);
  }

  public static long totalPosition(List<PartitionLag> lags) {
    return lags.stream().mapToLong(PartitionLag::position).sum();
  }

  /** Records what a handler saw, by partition, in delivery order. */
  public static final class Recorder {
    public final List<Event> all = new CopyOnWriteArrayList<>();
    public final Map<String, List<Event>> byPartition = new ConcurrentHashMap<>();

    public void record(Event e) {
      all.add(e);
      byPartition
          .computeIfAbsent(e.topic() + "#" + e.partition(), k -> new CopyOnWriteArrayList<>())
          .add(e);
    }

    public int size() {
      return all.size();
    }

    /** Per partition: the sequences seen, in delivery order. */
    public Map<String, List<Long>> sequences() {
      Map<String, List<Long>> out = new TreeMap<>();
      byPartition.forEach(
          (k, v) -> {
            List<Long> s = new ArrayList<>();
            v.forEach(e -> s.add(e.sequence()));
            out.put(k, s);
          });
      return out;
    }
  }

  /**
   * Creates a database for one test; the suites call this so a dialect's test class chooses the
   * server.
   */
  @FunctionalInterface
  public interface DatabaseFactory {
    TestDatabase create(String hint);
  }

  public static NamespacePath ns(String path) {
    return NamespacePath.of(path);
  }

  /** Of events k-0 … k-4 on subscription "s": k-2 became a dead letter, the others were handled. */
  static void awaitK2DeadLetteredAndTheOthersHandled(Boxline boxline, Recorder handled) {
    Await.until(
        WAIT,
        "k-2 dead-lettered",
        () -> boxline.deadLetters().list(io.boxline.DeadLetterQuery.of("s")).size() == 1);
    Await.until(WAIT, "the other 4 handled", () -> handled.size() >= 4);
    awaitCaughtUp(boxline, "s");
  }

  /** One attempt, then a dead letter. */
  static io.boxline.RetryPolicy deadLetterAtOnce() {
    return io.boxline.RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(20))
        .inPlaceAttempts(1)
        .maxAttempts(1);
  }
}
