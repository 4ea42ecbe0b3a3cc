package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.keyFor;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.GroupPolicy;
import io.boxline.OutgoingEvent;
import io.boxline.PartitionListener;
import io.boxline.TopicName;
import io.boxline.TopicPartition;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.PartitionKey;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Consumer groups over a real database log, with the coordination store chosen by the subclass:
 * weighted fair shares, churn without loss and with bounded duplicates, cold-partition pickup,
 * fencing, listeners, runtime policy changes.
 */
public abstract class ConsumerGroupBehaviour {
  /**
   * Quick check-ins so tests converge in seconds, with a generous deadline (10 missed check-ins) so
   * a busy test machine does not make live members look dead.
   */
  protected static final GroupPolicy FAST =
      GroupPolicy.DEFAULT
          .withMinCheckInInterval(Duration.ofMillis(150))
          .withDeadlineMultiplier(10)
          .withReleaseGrace(Duration.ofSeconds(2))
          .withIdleRelease(Duration.ofSeconds(30));

  protected TestDatabase db;
  protected CoordinationStore coordination;
  protected Boxline boxline;

  protected abstract TestDatabase newDatabase(String hint);

  /** The coordination store under test, for this test's database. Boxline closes it. */
  protected abstract CoordinationStore newCoordination(TestDatabase db);

  @BeforeEach
  void open(TestInfo info) {
    db = newDatabase(info.getTestMethod().map(m -> m.getName()).orElse("g"));
    coordination = newCoordination(db);
    boxline = db.boxline(b -> b.coordination(coordination));
  }

  @AfterEach
  void close() {
    db.close();
  }

  private void publishPerPartition(TopicName t, int partitions, int perPartition) {
    List<String> keys = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      keys.add(keyFor(p, partitions));
    }
    List<Object> batch = new ArrayList<>();
    for (int i = 0; i < perPartition; i++) {
      for (String k : keys) {
        batch.add(OutgoingEvent.builder(t).type("t").key(k).payload(new byte[8]).build());
        if (batch.size() == 1000) {
          List<Object> b = List.copyOf(batch);
          boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, b));
          batch.clear();
        }
      }
    }
    if (!batch.isEmpty()) {
      boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, batch));
    }
  }

  @Test
  void weightedMembersConvergeToTheirFairShareWithinTheSlack() {
    boxline.admin().setDefaultGroupPolicy(FAST);
    TopicName t = topic(boxline, "acme/fair/events", 60);
    subscribe(boxline, "fair", t);
    publishPerPartition(t, 60, 3);
    // Handlers wait at a gate, so all 60 partitions keep a backlog (stay active) while shares
    // settle.
    CountDownLatch gate = new CountDownLatch(1);
    io.boxline.EventHandler waitAtGate =
        e -> {
          try {
            gate.await(2, TimeUnit.MINUTES);
          } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
          }
        };
    try {
      Consumer w1 = start("fair", "w1", 1, waitAtGate);
      Consumer w2 = start("fair", "w2", 2, waitAtGate);
      Consumer w3 = start("fair", "w3", 3, waitAtGate);
      Await.until(
          Duration.ofSeconds(60),
          "shares 10/20/30 within 10%",
          () ->
              List.of(
                  w1.assignedPartitions().size(),
                  w2.assignedPartitions().size(),
                  w3.assignedPartitions().size()),
          s ->
              s.get(0) >= 9
                  && s.get(0) <= 11
                  && s.get(1) >= 18
                  && s.get(1) <= 22
                  && s.get(2) >= 27
                  && s.get(2) <= 33);
      Set<TopicPartition> all = new java.util.HashSet<>();
      for (Consumer c : List.of(w1, w2, w3)) {
        for (TopicPartition p : c.assignedPartitions()) {
          assertThat(all.add(p)).as("%s leased twice", p).isTrue();
        }
      }
    } finally {
      gate.countDown();
    }
  }

  @Test
  void aConsumerThatWouldBeOneTooManyFailsToStartWithAClearError() {
    boxline.admin().setDefaultGroupPolicy(FAST);
    TopicName t = topic(boxline, "acme/full/events", 4);
    subscribe(boxline, "full", t);
    boxline.admin().setGroupPolicy("full", FAST.withMaxMembers(2));
    Consumer a = start("full", "a", 1, e -> {});
    start("full", "b", 1, e -> {});
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> start("full", "c", 1, e -> {}))
        .isInstanceOf(io.boxline.GroupFullException.class)
        .hasMessageContaining("admits 2 consumers")
        .hasMessageContaining("[a, b]")
        .hasMessageContaining("withMaxMembers");
    assertThat(coordination.liveMembers("full"))
        .as("the refused consumer left again")
        .containsExactly("a", "b");
    a.close();
    start("full", "c", 1, e -> {});
    assertThat(coordination.liveMembers("full")).containsExactly("b", "c");
  }

  private Consumer start(String sub, String id, double weight, io.boxline.EventHandler h) {
    return boxline
        .consumer(sub)
        .id(id)
        .weight(weight)
        .batchSize(10)
        .concurrency(2)
        .handler(h)
        .start();
  }

  /**
   * Members join and leave (gracefully) while 100,000 events flow. Nothing is lost, no partition
   * skips an event, and every duplicate is accounted for by a hand-over: at most one in-flight
   * batch per partition per membership change.
   */
  @Test
  void churnLosesNothingKeepsOrderAndBoundsDuplicates() throws Exception {
    churn(io.boxline.Sequencing.SEQUENCER, false, 100_000, 1000);
  }

  /**
   * The same churn on an in-transaction topic whose members run handlers on the committing threads
   * where they can (small transactions, so many are handled there): claims on the committing thread
   * and partition releases must not lose, reorder or repeat more than a hand-over allows.
   */
  @Test
  void churnWithHandlersOnCommittingThreadsLosesNothingAndKeepsOrder() throws Exception {
    churn(io.boxline.Sequencing.IN_TRANSACTION, true, 20_000, 10);
  }

  private void churn(io.boxline.Sequencing sequencing, boolean committingThread, int total, int txn)
      throws Exception {
    boxline.admin().setDefaultGroupPolicy(FAST);
    int partitions = 16;
    int batchSize = 50;
    int concurrency = 2;
    TopicName t = topic(boxline, "acme/churn/events", partitions, sequencing);
    subscribe(boxline, "churn", t);
    ConcurrentLinkedQueue<long[]> deliveries = new ConcurrentLinkedQueue<>();
    ConcurrentHashMap<UUID, AtomicInteger> seen = new ConcurrentHashMap<>();
    io.boxline.EventHandler h =
        e -> {
          deliveries.add(new long[] {e.partition(), e.sequence()});
          seen.computeIfAbsent(e.id(), k -> new AtomicInteger()).incrementAndGet();
        };
    Thread producer =
        new Thread(
            () -> {
              for (int i = 0; i < total / txn; i++) {
                List<Object> batch = new ArrayList<>();
                for (int j = 0; j < txn; j++) {
                  batch.add(
                      OutgoingEvent.builder(t)
                          .type("t")
                          .key("key-" + ((i * txn + j) % 97))
                          .payload(new byte[16])
                          .build());
                }
                boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, batch));
              }
            });
    producer.start();
    List<Consumer> members = new ArrayList<>();
    java.util.function.Function<String, Consumer> join =
        id -> {
          Consumer c =
              boxline
                  .consumer("churn")
                  .id(id)
                  .batchSize(batchSize)
                  .concurrency(concurrency)
                  .handleOnCommittingThread(committingThread)
                  .handler(h)
                  .start();
          members.add(c);
          return c;
        };
    int changes = 0;
    Consumer c1 = join.apply("c1");
    awaitHandled(seen, total / 10);
    Consumer c2 = join.apply("c2");
    changes++;
    awaitHandled(seen, total / 4);
    Consumer c3 = join.apply("c3");
    changes++;
    awaitHandled(seen, total * 2 / 5);
    c1.close();
    changes++;
    awaitHandled(seen, total * 3 / 5);
    Consumer c4 = join.apply("c4");
    changes++;
    awaitHandled(seen, total * 3 / 4);
    c2.close();
    changes++;
    producer.join(TimeUnit.MINUTES.toMillis(2));
    Await.until(
        Duration.ofSeconds(90), "all " + total + " events handled", () -> seen.size() >= total);
    SuiteSupport.awaitCaughtUp(boxline, "churn");
    assertThat(seen).hasSize(total);
    long duplicates = seen.values().stream().mapToLong(a -> a.get() - 1).sum();
    long bound = (long) changes * partitions * batchSize;
    assertThat(duplicates).as("duplicates (bound %d)", bound).isLessThanOrEqualTo(bound);
    Map<Long, Long> maxSeq = new HashMap<>();
    for (long[] d : deliveries) {
      long max = maxSeq.getOrDefault(d[0], 0L);
      assertThat(d[1])
          .as("partition %d never skips: %d after max %d", d[0], d[1], max)
          .isLessThanOrEqualTo(max + 1);
      maxSeq.put(d[0], Math.max(max, d[1]));
    }
    assertThat(c3.handledCount() + c4.handledCount()).isPositive();
    assertThat(List.of(c3, c4)).allMatch(c -> c.fencedCount() == 0);
    if (committingThread) {
      assertThat(members.stream().mapToLong(Consumer::committingThreadBatches).sum())
          .as("batches handled on committing threads")
          .isPositive();
    }
  }

  private static void awaitHandled(Map<UUID, AtomicInteger> seen, int n) {
    Await.until(WAIT, n + " events handled", () -> seen.size() >= n);
  }

  @Test
  void aNewEventInAColdPartitionIsPickedUpPromptly() {
    boxline
        .admin()
        .setDefaultGroupPolicy(
            GroupPolicy.DEFAULT); // slow check-ins: pickup must not wait for them
    TopicName t = topic(boxline, "acme/cold/events", 64);
    subscribe(boxline, "cold", t);
    List<Event> seen = new CopyOnWriteArrayList<>();
    Consumer a = boxline.consumer("cold").id("a").handler(seen::add).start();
    Consumer b = boxline.consumer("cold").id("b").handler(seen::add).start();
    Await.until(
        WAIT, "both members checked in", () -> a.checkInCount() >= 1 && b.checkInCount() >= 1);
    for (int p : new int[] {3, 41, 63}) {
      String key = keyFor(p, 64);
      // Counted before the publish: the event may be handled before the publish call returns.
      int want = seen.size() + 1;
      long start = System.nanoTime();
      boxline.inTransaction(
          tx ->
              boxline.publisher().publish(tx, OutgoingEvent.builder(t).type("t").key(key).build()));
      Await.until(
          Duration.ofSeconds(5), "cold partition " + p + " picked up", () -> seen.size() >= want);
      // The default policy checks in every 2 s; pickup comes from the wake-up, not from a check-in.
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(1500));
    }
    assertThat(a.assignedPartitions().size() + b.assignedPartitions().size()).isEqualTo(3);
  }

  @Test
  void aConsumerWhoseLeaseWasTakenCannotMoveTheCursorAndIsTold() throws Exception {
    boxline.admin().setDefaultGroupPolicy(FAST);
    TopicName t = topic(boxline, "acme/fence/events", 1);
    subscribe(boxline, "fence", t);
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    List<Set<TopicPartition>> lostCalls = new CopyOnWriteArrayList<>();
    Consumer old =
        boxline
            .consumer("fence")
            .id("old")
            .listener(
                new PartitionListener() {
                  @Override
                  public void onLost(Set<TopicPartition> partitions) {
                    lostCalls.add(partitions);
                  }
                })
            .handler(
                e -> {
                  if (e.sequence() == 1 && entered.getCount() > 0) {
                    entered.countDown();
                    SuiteSupport.awaitRelease(release);
                  }
                })
            .start();
    SuiteSupport.publish(boxline, t, "k", 3);
    assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
    // An operator (or a missed deadline) frees the lease; a new member takes it with a newer epoch.
    long topicId = boxline.admin().topic(t).orElseThrow().id();
    coordination.forceRelease("fence", List.of(PartitionKey.of(topicId, 0)));
    List<Event> fresh = new CopyOnWriteArrayList<>();
    Consumer taker = boxline.consumer("fence").id("taker").handler(fresh::add).start();
    Await.until(WAIT, "old consumer told it lost the partition", () -> old.lostCount() >= 1);
    Await.until(
        WAIT,
        "the partition is delivered again",
        () -> fresh.size() + 0 >= 1 || !old.assignedPartitions().isEmpty());
    release.countDown();
    Await.until(WAIT, "the stale commit was rejected", () -> old.fencedCount() >= 1);
    assertThat(lostCalls).isNotEmpty();
    assertThat(lostCalls.get(0)).containsExactly(new TopicPartition(t, 0));
    Await.until(WAIT, "cursor at 3", () -> boxline.admin().lag("fence").get(0).position() == 3);
    assertThat(taker.fencedCount()).isZero();
  }

  @Test
  void listenersHearAssignmentsBeforeEventsAndRevocationsAfter() {
    boxline.admin().setDefaultGroupPolicy(FAST);
    TopicName t = topic(boxline, "acme/listen/events", 2);
    subscribe(boxline, "listen", t);
    List<String> log = new CopyOnWriteArrayList<>();
    Consumer c =
        boxline
            .consumer("listen")
            .listener(
                new PartitionListener() {
                  @Override
                  public void onAssigned(Set<TopicPartition> partitions) {
                    partitions.forEach(p -> log.add("assigned " + p.partition()));
                  }

                  @Override
                  public void onRevoked(Set<TopicPartition> partitions) {
                    partitions.forEach(p -> log.add("revoked " + p.partition()));
                  }
                })
            .handler(e -> log.add("event " + e.partition()))
            .start();
    SuiteSupport.publish(boxline, t, "k", 10);
    Await.until(
        WAIT, "10 events", () -> log.stream().filter(s -> s.startsWith("event")).count() >= 10);
    c.close();
    for (int p = 0; p < 2; p++) {
      int first = log.indexOf("event " + p);
      if (first >= 0) {
        assertThat(log.indexOf("assigned " + p)).isBetween(0, first);
        assertThat(log.lastIndexOf("revoked " + p)).isGreaterThan(log.lastIndexOf("event " + p));
      }
    }
  }

  @Test
  void policyChangesReachRunningConsumers() {
    TopicName t = topic(boxline, "acme/policy/events", 1);
    subscribe(boxline, "pol", t);
    boxline
        .admin()
        .setDefaultGroupPolicy(GroupPolicy.DEFAULT.withMinCheckInInterval(Duration.ofSeconds(1)));
    Consumer c = boxline.consumer("pol").handler(e -> {}).start();
    assertThat(boxline.admin().groupPolicy("pol").minCheckInInterval())
        .isEqualTo(Duration.ofSeconds(1));
    // A lone member checks in every max(minCheckInInterval, 1 / checkInRate): 50 ms at 20 per s.
    GroupPolicy quick =
        GroupPolicy.DEFAULT.withMinCheckInInterval(Duration.ofMillis(50)).withCheckInRate(20);
    boxline.admin().setGroupPolicy("pol", quick);
    assertThat(boxline.admin().groupPolicy("pol")).isEqualTo(quick);
    long before = c.checkInCount();
    // At 1 s per check-in, 40 more would take 40 s; the new policy makes it 2 s once it is read
    // (within 10 check-ins).
    Await.until(
        Duration.ofSeconds(25), "check-ins speed up", () -> c.checkInCount() >= before + 40);
    boxline.admin().setGroupPolicy("pol", null);
    assertThat(boxline.admin().groupPolicy("pol").minCheckInInterval())
        .isEqualTo(Duration.ofSeconds(1));
  }

  /**
   * Fifty members start at once with the default policy. The first check-ins see a small group and
   * write short deadlines; the group's larger size must not stretch the next check-in past them
   * (else members look dead to each other and leases are taken over). Then every busy partition is
   * leased and every member holds a fair share.
   */
  @Test
  void fiftyMembersJoiningAtOnceWithTheDefaultPolicyStayAliveAndBalance() {
    TopicName t = topic(boxline, "acme/join/events", 64);
    subscribe(boxline, "join", t);
    publishPerPartition(t, 64, 2);
    CountDownLatch gate = new CountDownLatch(1);
    io.boxline.EventHandler waitAtGate =
        e -> {
          try {
            gate.await(2, TimeUnit.MINUTES);
          } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
          }
        };
    List<Consumer> members = new ArrayList<>();
    try {
      for (int i = 0; i < 50; i++) {
        members.add(
            boxline
                .consumer("join")
                .id("j" + i)
                .batchSize(1)
                .concurrency(1)
                .handler(waitAtGate)
                .start());
      }
      // Share 64/50 = 1.28: bounds [1, 2] with the default 10% slack.
      Await.until(
          Duration.ofSeconds(90),
          "all 64 partitions leased, every member holding 1 or 2, each checked in 3 times",
          () -> {
            int total = 0;
            boolean fair = true;
            boolean checkedIn = true;
            for (Consumer c : members) {
              int n = c.assignedPartitions().size();
              total += n;
              fair &= n >= 1 && n <= 2;
              checkedIn &= c.checkInCount() >= 3;
            }
            return total == 64 && fair && checkedIn;
          });
      for (int i = 0; i < members.size(); i++) {
        assertThat(members.get(i).lostCount()).as("partitions j%d lost to take-overs", i).isZero();
      }
    } finally {
      gate.countDown();
      members.forEach(Consumer::close);
    }
  }
}
