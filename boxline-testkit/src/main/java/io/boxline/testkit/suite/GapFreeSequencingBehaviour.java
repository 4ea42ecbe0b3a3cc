package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.body;
import static io.boxline.testkit.suite.SuiteSupport.raw;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.EventTypes;
import io.boxline.PublishResult;
import io.boxline.Sequencing;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.suite.SuiteSupport.Recorder;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Contract point 3 under load, for both kinds of sequencing: concurrent producers committing out of
 * order lose nothing, leave no gaps and keep per-key order. A dialect's test class extends this and
 * says how to get a database.
 */
public abstract class GapFreeSequencingBehaviour extends DatabaseSuite {

  private Boxline boxline() {
    return db.boxline(EventTypes.empty());
  }

  /**
   * Contract point 3. Sixteen producers run transactions of random size that stay open for random
   * times (so outbox ids are taken in one order and committed in another), a tenth of them roll
   * back, while two subscriptions consume. Each subscription must see every committed event exactly
   * once, each partition as the gap-free sequence 1..n, per-key publish order kept, and nothing
   * that rolled back.
   */
  @Test
  void concurrentProducersCommittingOutOfOrderLoseNothingAndLeaveNoGaps() throws Exception {
    proveNothingLostNoGaps(Sequencing.SEQUENCER);
  }

  /**
   * Contract point 3 for topics whose producers number their events in their own transactions: half
   * the producers publish in plain transactions (one {@code publishAll} each), half through {@code
   * inTransaction} with one publish call per event (its events are written at the commit and handed
   * to the consumers in memory after it).
   */
  @Test
  void inTransactionSequencingLosesNothingAndLeavesNoGapsUnderConcurrentProducers()
      throws Exception {
    proveNothingLostNoGaps(Sequencing.IN_TRANSACTION);
    // Nothing went through the outbox or the sequencer; the plain transactions' events were found
    // by reading the partitions' heads after they committed (a consumer of this instance reads
    // them). The first subscription handles on committing threads when it is caught up, which
    // under this load may not happen at all; TransactionModelBehaviour asserts that path is taken.
    assertThat(proofBoxline.stats().eventsSequenced()).isZero();
    assertThat(proofBoxline.stats().announcerLooks()).isPositive();
  }

  private Boxline proofBoxline;

  private static final class RollBack extends RuntimeException {
    RollBack() {
      super("roll back", null, false, false);
    }
  }

  private static void holdFor(int millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private void proveNothingLostNoGaps(Sequencing sequencing) throws Exception {
    Boxline boxline = boxline();
    proofBoxline = boxline;
    TopicName t = topic(boxline, "acme/proof/events", 8, sequencing);
    subscribe(boxline, "first", t);
    subscribe(boxline, "second", t);
    Recorder first = new Recorder();
    Recorder second = new Recorder();
    // On in-transaction topics the first subscription also handles on the committing threads.
    boxline
        .consumer("first")
        .handler(first::record)
        .batchSize(50)
        .concurrency(4)
        .handleOnCommittingThread(sequencing == Sequencing.IN_TRANSACTION)
        .start();
    boxline
        .consumer("second")
        .batchHandler(b -> b.forEach(second::record))
        .batchSize(200)
        .concurrency(2)
        .start();

    int producers = 16;
    int txPerProducer = 40;
    Set<UUID> committed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    Set<UUID> rolledBack = java.util.concurrent.ConcurrentHashMap.newKeySet();
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    for (int p = 0; p < producers; p++) {
      int producer = p;
      Thread th =
          new Thread(
              () -> {
                java.util.Random rnd = new java.util.Random(producer);
                int[] counters = new int[5];
                boolean managed = sequencing == Sequencing.IN_TRANSACTION && producer % 2 == 1;
                try (Connection c = db.dataSource().getConnection()) {
                  c.setAutoCommit(false);
                  for (int i = 0; i < txPerProducer; i++) {
                    int size = 1 + rnd.nextInt(12);
                    List<Object> events = new ArrayList<>();
                    int[] next = counters.clone();
                    for (int j = 0; j < size; j++) {
                      int k = rnd.nextInt(5);
                      String key = "p" + producer + "-k" + k;
                      events.add(raw(t, key, key + ":" + next[k]++));
                    }
                    // Hold the transaction open for a random time so commits interleave out of id
                    // order. This shapes the workload; it synchronises nothing.
                    int hold = rnd.nextInt(15);
                    boolean rollBack = rnd.nextInt(10) == 0;
                    if (managed) {
                      List<PublishResult> results = new ArrayList<>();
                      try {
                        boxline.inTransaction(
                            tx -> {
                              // One call per event, partitions in random order: inTransaction
                              // holds them back and writes them in key order at the commit, so
                              // these transactions neither deadlock nor lose the call order.
                              for (Object e : events) {
                                results.add(boxline.publisher().publish(tx, e));
                              }
                              holdFor(hold);
                              if (rollBack) {
                                throw new RollBack();
                              }
                              return null;
                            });
                        counters = next;
                        results.forEach(r -> committed.add(r.eventId()));
                      } catch (RollBack expected) {
                        results.forEach(r -> rolledBack.add(r.eventId()));
                      }
                      continue;
                    }
                    List<PublishResult> results = boxline.publisher().publishAll(c, events);
                    Thread.sleep(hold);
                    if (rollBack) {
                      c.rollback();
                      results.forEach(r -> rolledBack.add(r.eventId()));
                    } else {
                      c.commit();
                      counters = next;
                      results.forEach(r -> committed.add(r.eventId()));
                    }
                  }
                } catch (Throwable e) {
                  failures.add(e);
                }
              },
              "producer-" + p);
      threads.add(th);
      th.start();
    }
    for (Thread th : threads) {
      th.join(TimeUnit.MINUTES.toMillis(2));
    }
    assertThat(failures).isEmpty();
    assertThat(rolledBack).isNotEmpty();
    assertThat(committed.size()).isGreaterThan(1000);
    Await.until(
        Duration.ofSeconds(60),
        "both subscriptions saw " + committed.size() + " events",
        () -> first.size() >= committed.size() && second.size() >= committed.size());
    SuiteSupport.awaitCaughtUp(boxline, "first");
    SuiteSupport.awaitCaughtUp(boxline, "second");
    for (Recorder r : List.of(first, second)) {
      assertThat(r.size()).as("exactly once: no duplicates").isEqualTo(committed.size());
      Set<UUID> ids = new HashSet<>();
      r.all.forEach(e -> ids.add(e.id()));
      assertThat(ids).isEqualTo(committed);
      assertThat(ids).doesNotContainAnyElementsOf(rolledBack);
      r.sequences()
          .forEach(
              (partition, seqs) -> {
                for (int i = 0; i < seqs.size(); i++) {
                  assertThat(seqs.get(i)).as("%s delivery %d", partition, i).isEqualTo(i + 1L);
                }
              });
      Map<String, Integer> lastPerKey = new HashMap<>();
      for (Event e : r.all) {
        String[] f = body(e).split(":");
        int n = Integer.parseInt(f[1]);
        Integer prev = lastPerKey.put(f[0], n);
        assertThat(prev == null ? -1 : prev).as("order of key %s", f[0]).isEqualTo(n - 1);
      }
    }
  }
}
