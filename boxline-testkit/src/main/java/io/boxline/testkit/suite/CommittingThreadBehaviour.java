package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.body;
import static io.boxline.testkit.suite.SuiteSupport.raw;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.EventHandler;
import io.boxline.EventTypes;
import io.boxline.RetryPolicy;
import io.boxline.Sequencing;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.suite.SuiteSupport.Recorder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * {@code ConsumerBuilder.handleOnCommittingThread}: handlers run on the thread that committed the
 * events of an in-transaction topic, before {@code inTransaction} returns, without giving up order,
 * retries, dead letters or a bounded stop. Every store must show it.
 */
public abstract class CommittingThreadBehaviour extends DatabaseSuite {

  /** Records each event with the thread that handled it. */
  private static final class Seen implements EventHandler {
    final Recorder events = new Recorder();
    final Map<Long, Thread> threads = new ConcurrentHashMap<>();

    @Override
    public void handle(Event e) {
      threads.put(e.sequence() * 1_000 + e.partition(), Thread.currentThread());
      events.record(e);
    }

    Thread thread(Event e) {
      return threads.get(e.sequence() * 1_000 + e.partition());
    }
  }

  private Boxline boxline() {
    return db.boxline(EventTypes.empty());
  }

  private static TopicName inTransactionTopic(Boxline boxline, String name, int partitions) {
    return SuiteSupport.topic(boxline, name, partitions, Sequencing.IN_TRANSACTION);
  }

  /**
   * Events with the body "warm-up" until each consumer holds every partition of {@code t} (a
   * partition is leased once it has events) and has handled one batch on the committing thread: a
   * partition whose worker is still finishing its batch when the next commit comes goes to the
   * workers again. Returns how many warm-up events were published.
   */
  private static int warmUp(Boxline boxline, TopicName t, int partitions, Consumer... consumers) {
    int keys = partitions == 1 ? 1 : 16;
    boxline.inTransaction(
        tx -> {
          for (int i = 0; i < keys; i++) {
            boxline.publisher().publish(tx, raw(t, i == 0 ? "k" : "w" + i, "warm-up"));
          }
          return null;
        });
    awaitHandled(keys, consumers);
    for (Consumer c : consumers) {
      Await.until(
          WAIT,
          "every partition held by " + c.id(),
          () -> c.assignedPartitions().size() == partitions);
    }
    int published = keys;
    long[] before = new long[consumers.length];
    for (int i = 0; i < consumers.length; i++) {
      before[i] = consumers[i].committingThreadBatches();
    }
    long deadline = System.nanoTime() + WAIT.toNanos();
    for (int i = 0; i < consumers.length; i++) {
      while (consumers[i].committingThreadBatches() == before[i]) {
        assertThat(System.nanoTime() - deadline)
            .as("a warm-up event handled on the committing thread within " + WAIT)
            .isNegative();
        boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "k", "warm-up")));
        awaitHandled(++published, consumers);
      }
    }
    for (Consumer c : consumers) {
      SuiteSupport.awaitCaughtUp(boxline, c.subscription());
    }
    return published;
  }

  private static void awaitHandled(int events, Consumer... consumers) {
    for (Consumer c : consumers) {
      Await.until(WAIT, c.id() + " handled " + events, () -> c.handledCount() >= events);
    }
  }

  private static Event last(Seen seen) {
    return seen.events.all.get(seen.events.size() - 1);
  }

  /** What a consumer handled after the warm-up. */
  private static List<String> afterWarmUp(Seen seen) {
    return seen.events.all.stream()
        .map(SuiteSupport::body)
        .filter(b -> !b.equals("warm-up"))
        .toList();
  }

  @Test
  void theHandlerRunsOnTheCommittingThreadBeforeInTransactionReturns() {
    Boxline boxline = boxline();
    TopicName t = inTransactionTopic(boxline, "acme/inline/orders", 1);
    subscribe(boxline, "s", t);
    Seen seen = new Seen();
    Consumer consumer = boxline.consumer("s").handleOnCommittingThread(true).handler(seen).start();
    int warm = warmUp(boxline, t, 1, consumer);

    // A worker woken by an earlier announcement may hold the partition a moment longer (it finds
    // nothing and lets go); a transaction that meets it leaves its events to that worker, which is
    // right. Such a transaction is handled by the worker and the next one tried (bounded).
    List<String> inline = null;
    long batches = 0;
    int handled = warm;
    for (int attempt = 0; attempt < 10 && inline == null; attempt++) {
      batches = consumer.committingThreadBatches();
      String prefix = "a" + attempt + "-e-";
      boxline.inTransaction(
          tx -> {
            for (int i = 0; i < 3; i++) {
              boxline.publisher().publish(tx, raw(t, "k", prefix + i));
            }
            return null;
          });
      if (consumer.committingThreadBatches() > batches) {
        inline = List.of(prefix + 0, prefix + 1, prefix + 2);
      } else {
        handled += 3;
        awaitHandled(handled, consumer);
      }
    }
    assertThat(inline).as("a transaction handled on its committing thread in 10 tries").isNotNull();

    // No wait: the three were handled before inTransaction returned, on this thread.
    List<Event> last = seen.events.all.subList(handled, seen.events.size());
    assertThat(last.stream().map(SuiteSupport::body).toList()).isEqualTo(inline);
    for (Event e : last) {
      assertThat(seen.thread(e)).as("thread of " + body(e)).isSameAs(Thread.currentThread());
    }
    assertThat(consumer.committingThreadBatches()).isEqualTo(batches + 1);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(consumer.handledCount()).isEqualTo(handled + 3);
  }

  /**
   * A transactional handler (which reads the log instead of taking the hand-over) and a batch
   * handler run on the committing thread too, and the transactional handler's writes commit with
   * its cursor before {@code inTransaction} returns.
   */
  @Test
  void transactionalAndBatchHandlersRunOnTheCommittingThreadToo() throws Exception {
    Boxline boxline = boxline();
    TopicName t = inTransactionTopic(boxline, "acme/inline/ledger", 1);
    subscribe(boxline, "s", t);
    subscribe(boxline, "batches", t);
    String table = db.table("inline_effect");
    try (var c = db.dataSource().getConnection();
        var st = c.createStatement()) {
      st.execute("CREATE TABLE " + table + " (body VARCHAR(100) NOT NULL)");
    }
    Seen seen = new Seen();
    Consumer ledger =
        boxline
            .consumer("s")
            .handleOnCommittingThread(true)
            .transactionalHandler(
                (e, tx) -> {
                  seen.handle(e);
                  try (var ps = tx.prepareStatement("INSERT INTO " + table + " VALUES (?)")) {
                    ps.setString(1, body(e));
                    ps.executeUpdate();
                  }
                })
            .start();
    Seen batched = new Seen();
    Consumer batches =
        boxline
            .consumer("batches")
            .handleOnCommittingThread(true)
            .batchHandler(events -> events.forEach(batched::handle))
            .start();
    int warm = warmUp(boxline, t, 1, ledger, batches);
    long ledgerBatches = ledger.committingThreadBatches();
    long batchBatches = batches.committingThreadBatches();

    boxline.inTransaction(
        tx -> boxline.publisher().publishAll(tx, List.of(raw(t, "k", "a"), raw(t, "k", "b"))));

    assertThat(afterWarmUp(seen)).containsExactly("a", "b");
    assertThat(seen.thread(last(seen))).isSameAs(Thread.currentThread());
    assertThat(afterWarmUp(batched)).containsExactly("a", "b");
    assertThat(batched.thread(last(batched))).isSameAs(Thread.currentThread());
    try (var c = db.dataSource().getConnection();
        var st = c.createStatement();
        var rs = st.executeQuery("SELECT count(*) FROM " + table)) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getInt(1)).as("warm-up, a and b written with their cursor").isEqualTo(warm + 2);
    }
    assertThat(ledger.committingThreadBatches()).isEqualTo(ledgerBatches + 1);
    assertThat(batches.committingThreadBatches()).isEqualTo(batchBatches + 1);
  }

  /**
   * Many threads commit into the same partitions at once: each partition's events are still handled
   * in sequence, every event exactly once, some on the committing threads and the rest on the
   * workers.
   */
  @Test
  void concurrentCommittersKeepEachPartitionsOrder() throws Exception {
    Boxline boxline = boxline();
    TopicName t = inTransactionTopic(boxline, "acme/inline/busy", 2);
    subscribe(boxline, "s", t);
    Seen seen = new Seen();
    Consumer consumer =
        boxline.consumer("s").handleOnCommittingThread(true).concurrency(2).handler(seen).start();
    int warmUps = warmUp(boxline, t, 2, consumer);

    int threads = 8;
    int transactions = 40;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<Integer>> published = new ArrayList<>();
    for (int p = 0; p < threads; p++) {
      int producer = p;
      published.add(
          pool.submit(
              () -> {
                int n = 0;
                for (int i = 0; i < transactions; i++) {
                  int size = 1 + ThreadLocalRandom.current().nextInt(3);
                  int first = n;
                  boxline.inTransaction(
                      tx -> {
                        for (int j = 0; j < size; j++) {
                          String key = "k" + ThreadLocalRandom.current().nextInt(5);
                          boxline
                              .publisher()
                              .publish(tx, raw(t, key, producer + "-" + (first + j)));
                        }
                        return null;
                      });
                  n += size;
                }
                return n;
              }));
    }
    int total = warmUps;
    for (Future<Integer> f : published) {
      total += f.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }
    pool.shutdown();
    int expected = total;
    Await.until(WAIT, "all " + expected + " events handled", () -> seen.events.size() >= expected);
    SuiteSupport.awaitCaughtUp(boxline, "s");

    assertThat(seen.events.all).hasSize(expected);
    assertThat(seen.events.all.stream().map(Event::id).collect(Collectors.toSet()))
        .hasSize(expected);
    seen.events
        .sequences()
        .forEach(
            (partition, sequences) ->
                assertThat(sequences)
                    .as("sequences of " + partition)
                    .containsExactlyElementsOf(
                        LongStream.rangeClosed(1, sequences.size()).boxed().toList()));
    Set<Thread> handlerThreads = new HashSet<>(seen.threads.values());
    assertThat(handlerThreads.stream().map(Thread::getName))
        .as("committing threads among the handlers' threads")
        .anyMatch(name -> name.startsWith("pool-"));
    assertThat(consumer.committingThreadBatches()).isPositive();
  }

  /**
   * A rolled-back transaction hands nothing over, a failing handler on the committing thread is
   * dead-lettered by the policy as on a worker, and the events after it are still handled there.
   */
  @Test
  void rollbacksHandNothingAndFailuresAreDeadLettered() {
    Boxline boxline = boxline();
    TopicName t = inTransactionTopic(boxline, "acme/inline/failing", 1);
    subscribe(boxline, "s", t);
    Seen seen = new Seen();
    Consumer consumer =
        boxline
            .consumer("s")
            .handleOnCommittingThread(true)
            .retryPolicy(
                RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(20))
                    .inPlaceAttempts(1)
                    .maxAttempts(1))
            .handler(
                e -> {
                  if (body(e).equals("poison")) {
                    throw new IllegalStateException("poison fails");
                  }
                  seen.handle(e);
                })
            .start();
    int warm = warmUp(boxline, t, 1, consumer);

    assertThatThrownBy(
            () ->
                boxline.inTransaction(
                    tx -> {
                      boxline.publisher().publish(tx, raw(t, "k", "rolled-back"));
                      throw new IllegalStateException("roll back");
                    }))
        .hasMessage("roll back");
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "other", "poison")));
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("s")))
        .as("dead-lettered before inTransaction returned")
        .hasSize(1);
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "k", "after")));
    Await.until(
        WAIT, "the event after the dead letter handled", () -> !afterWarmUp(seen).isEmpty());
    assertThat(afterWarmUp(seen)).containsExactly("after");
    assertThat(last(seen).sequence()).as("the rolled-back number reused").isEqualTo(warm + 2L);
    // Later events are handled on the committing thread again. (Right after the dead letter a
    // worker that is reading the log just then may take one first, on MariaDB now and then.)
    Await.until(
        WAIT,
        "an event after the dead letter handled on the committing thread",
        () -> {
          boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "k", "again")));
          return seen.thread(last(seen)) == Thread.currentThread();
        });
    SuiteSupport.awaitCaughtUp(boxline, "s");
  }

  /**
   * An {@code inTransaction} inside another one's work (a transaction of its own) hands its events
   * over when it commits, not when the outer one does.
   */
  @Test
  void anInnerTransactionIsHandledWhenItCommitsNotWhenTheOuterOneDoes() {
    Boxline boxline = boxline();
    TopicName t = inTransactionTopic(boxline, "acme/inline/nested", 1);
    subscribe(boxline, "s", t);
    Seen seen = new Seen();
    Consumer consumer = boxline.consumer("s").handleOnCommittingThread(true).handler(seen).start();
    warmUp(boxline, t, 1, consumer);

    List<String> seenInside = new ArrayList<>();
    boxline.inTransaction(
        outer -> {
          boxline.inTransaction(inner -> boxline.publisher().publish(inner, raw(t, "k", "inner")));
          seenInside.addAll(afterWarmUp(seen));
          return null;
        });

    assertThat(seenInside).containsExactly("inner");
    assertThat(seen.thread(last(seen))).isSameAs(Thread.currentThread());
  }

  /**
   * A handler that throws an Error on the committing thread: {@code inTransaction} (already
   * committed) throws it, the other consumer's batch still runs there, and a worker delivers the
   * event again.
   */
  @Test
  void anErrorFromAHandlerReachesTheCallerAndTheEventIsDeliveredAgain() {
    Boxline boxline = boxline();
    TopicName t = inTransactionTopic(boxline, "acme/inline/errors", 1);
    subscribe(boxline, "s", t);
    subscribe(boxline, "other", t);
    java.util.concurrent.atomic.AtomicBoolean broken =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    Seen seen = new Seen();
    Consumer failing =
        boxline
            .consumer("s")
            .handleOnCommittingThread(true)
            .handler(
                e -> {
                  if (body(e).equals("boom") && broken.getAndSet(false)) {
                    throw new AssertionError("an Error, not an exception");
                  }
                  seen.handle(e);
                })
            .start();
    Seen other = new Seen();
    Consumer healthy =
        boxline.consumer("other").handleOnCommittingThread(true).handler(other).start();
    int warm = warmUp(boxline, t, 1, failing, healthy);

    assertThatThrownBy(
            () -> boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "k", "boom"))))
        .isInstanceOf(AssertionError.class)
        .hasMessage("an Error, not an exception");

    assertThat(afterWarmUp(other)).containsExactly("boom");
    assertThat(other.thread(last(other))).isSameAs(Thread.currentThread());
    Await.until(WAIT, "boom delivered again", () -> seen.events.size() >= warm + 1);
    assertThat(afterWarmUp(seen)).containsExactly("boom");
    assertThat(seen.thread(last(seen))).isNotSameAs(Thread.currentThread());
    SuiteSupport.awaitCaughtUp(boxline, "s");
  }

  /**
   * A handler that runs a transaction of its own does not handle that transaction's events on its
   * thread as well: they go to the workers, so handlers never nest.
   */
  @Test
  void aHandlersOwnTransactionHandsItsEventsToTheWorkers() {
    Boxline boxline = boxline();
    TopicName orders = inTransactionTopic(boxline, "acme/inline/orders", 1);
    TopicName mails = inTransactionTopic(boxline, "acme/inline/mails", 1);
    subscribe(boxline, "s", orders);
    subscribe(boxline, "mails", mails);
    Seen seenMails = new Seen();
    Consumer mailer =
        boxline.consumer("mails").handleOnCommittingThread(true).handler(seenMails).start();
    Seen seenOrders = new Seen();
    Consumer consumer =
        boxline
            .consumer("s")
            .handleOnCommittingThread(true)
            .handler(
                e -> {
                  seenOrders.handle(e);
                  boxline.inTransaction(
                      tx -> boxline.publisher().publish(tx, raw(mails, "m", "mail-" + body(e))));
                })
            .start();
    int warm = warmUp(boxline, orders, 1, consumer);
    Await.until(WAIT, "the warm-up mails", () -> seenMails.events.size() >= warm);
    Await.until(WAIT, "the mail partition held", () -> !mailer.assignedPartitions().isEmpty());
    SuiteSupport.awaitCaughtUp(boxline, "mails");
    // The warm-up's cursor moves after its handler returned; an event committed before that goes to
    // the workers, not to the committing thread.
    SuiteSupport.awaitCaughtUp(boxline, "s");

    // A worker still holding the partition (it was reading the log just then) takes a transaction's
    // events by design; that order is handled there, and the next one tried (bounded), as above.
    String inline = null;
    List<String> published = new java.util.ArrayList<>();
    long before = 0;
    for (int attempt = 0; attempt < 10 && inline == null; attempt++) {
      String order = "order-" + attempt;
      before = mailer.committingThreadBatches();
      long batches = consumer.committingThreadBatches();
      boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(orders, "k", order)));
      published.add(order);
      if (consumer.committingThreadBatches() > batches) {
        inline = order;
      } else {
        int n = published.size();
        Await.until(WAIT, order + " and its mail", () -> seenMails.events.size() >= warm + n);
        SuiteSupport.awaitCaughtUp(boxline, "s");
        SuiteSupport.awaitCaughtUp(boxline, "mails");
      }
    }
    assertThat(inline).as("an order handled on its committing thread in 10 tries").isNotNull();

    assertThat(afterWarmUp(seenOrders)).isEqualTo(published);
    assertThat(seenOrders.thread(last(seenOrders))).isSameAs(Thread.currentThread());
    int all = published.size();
    Await.until(WAIT, "the order's mail", () -> seenMails.events.size() >= warm + all);
    Event mail = last(seenMails);
    assertThat(body(mail)).isEqualTo("mail-" + inline);
    assertThat(seenMails.thread(mail)).isNotSameAs(Thread.currentThread());
    assertThat(mailer.committingThreadBatches()).isEqualTo(before);
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      if (!latch.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
        throw new IllegalStateException("the test did not release the handler");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /**
   * stop waits for a batch on a committing thread as for one on a worker, within its timeout. A
   * loaded machine sometimes hands a commit to the workers (the consumer was reading the log), so
   * the test publishes "slow-N" events until one runs on the thread that committed it; those that
   * went to a worker are handled at once.
   */
  @Test
  void stopWaitsForABatchOnACommittingThread() throws Exception {
    Boxline boxline = boxline();
    TopicName t = inTransactionTopic(boxline, "acme/inline/slow", 1);
    subscribe(boxline, "s", t);
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Seen seen = new Seen();
    Consumer consumer =
        boxline
            .consumer("s")
            .handleOnCommittingThread(true)
            .handler(
                e -> {
                  if (body(e).startsWith("slow")
                      && Thread.currentThread().getName().equals("committer-" + body(e))) {
                    entered.countDown();
                    awaitQuietly(release);
                  }
                  seen.handle(e);
                })
            .start();
    int warm = warmUp(boxline, t, 1, consumer);
    Thread producer = null;
    String slow = null;
    for (int i = 1; i <= 20 && entered.getCount() > 0; i++) {
      String body = "slow-" + i;
      Thread committer =
          new Thread(
              () -> boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "k", body))),
              "committer-" + body);
      committer.start();
      int before = seen.events.size();
      Await.until(
          WAIT,
          body + " running on its committing thread or handled by a worker",
          () -> entered.getCount() == 0 || seen.events.size() > before);
      if (entered.getCount() == 0) {
        producer = committer;
        slow = body;
      } else {
        committer.join(WAIT.toMillis());
        warm++;
      }
    }
    assertThat(producer).as("a slow event ran on its committing thread in 20 tries").isNotNull();
    assertThat(seen.events.size()).isEqualTo(warm);

    assertThat(consumer.stop(Duration.ofMillis(200)))
        .as("stop reports the batch still running on the committing thread")
        .isFalse();
    release.countDown();
    producer.join(WAIT.toMillis());
    assertThat(producer.isAlive()).isFalse();
    assertThat(seen.thread(last(seen)).getName()).isEqualTo("committer-" + slow);
    // Abandoned by the stop: not committed, so a new consumer gets it again.
    Seen again = new Seen();
    boxline.consumer("s").handler(again).start();
    Await.until(WAIT, "the abandoned event delivered again", () -> again.events.size() >= 1);
    assertThat(again.events.all).extracting(SuiteSupport::body).containsExactly(slow);
  }
}
