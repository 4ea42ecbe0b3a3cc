package io.boxline.testing;

import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.EventQuery;
import io.boxline.PartitionLag;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.internal.memory.InMemoryStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeoutException;

/**
 * Helpers for an application's tests.
 *
 * <pre>{@code
 * Boxline boxline = BoxlineTesting.inMemory().build().start();      // no database needed
 * ... create topics and subscriptions, start the consumers under test ...
 * boxline.inTransaction(tx -> service.placeOrder(tx, order));        // the code under test publishes
 * assertThat(BoxlineTesting.published(boxline, ORDERS)).extracting(Event::type)
 *     .containsExactly("order.placed");                              // what the transaction published
 * BoxlineTesting.awaitIdle(boxline, Duration.ofSeconds(5));          // every handler has run
 * }</pre>
 *
 * <p>The same calls work on a Boxline over a real database (PostgreSQL, MariaDB, H2), which is what
 * tests of transactional handlers and of SQL should use.
 */
public final class BoxlineTesting {
  private BoxlineTesting() {}

  /**
   * A builder for a Boxline on an in-memory store on the system clock: everything runs in this JVM
   * and nothing is durable. Add settings as usual ({@code eventTypes}, {@code observer}...), then
   * build and start it.
   */
  public static Boxline.Builder inMemory() {
    return inMemory(Clock.systemUTC());
  }

  /**
   * Like {@link #inMemory()} on {@code clock}: the store and the engine both read it, so a test
   * that moves the clock makes retries and delayed events due.
   */
  public static Boxline.Builder inMemory(Clock clock) {
    return Boxline.builder().store(InMemoryStore.create(clock)).clock(clock);
  }

  /**
   * An empty in-memory {@link io.boxline.spi.Store} whose times all come from {@code clock}: for
   * tests that drive the store SPI themselves (contract suites, the deterministic simulator). It
   * starts no thread, so a caller that makes every call from one thread gets the same answers for
   * the same calls.
   */
  public static io.boxline.spi.Store inMemoryStore(Clock clock) {
    return InMemoryStore.create(clock);
  }

  /**
   * Every event the topic's log holds, in partition then sequence order: what was published and
   * committed, once the sequencer has numbered it (use {@link #awaitSequenced} first when the test
   * does not wait for handlers anyway). Tasks are the events of {@link io.boxline.Tasks#TOPIC}.
   */
  public static List<Event> published(Boxline boxline, TopicName topic) {
    TopicInfo t =
        boxline
            .admin()
            .topic(topic)
            .orElseThrow(() -> new ValidationException("topic '" + topic + "' does not exist"));
    List<Event> out = new ArrayList<>();
    for (int p = 0; p < t.partitions(); p++) {
      long after = 0;
      while (true) {
        List<Event> page =
            boxline.admin().events(EventQuery.of(topic, p).after(after).limit(10_000));
        out.addAll(page);
        if (page.size() < 10_000) {
          break;
        }
        after = page.get(page.size() - 1).sequence();
      }
    }
    out.sort(Comparator.comparingInt(Event::partition).thenComparingLong(Event::sequence));
    return out;
  }

  /**
   * Waits until every committed event has left the outbox (the sequencer numbered it).
   *
   * @throws TimeoutException when that takes longer than {@code timeout}
   */
  public static void awaitSequenced(Boxline boxline, Duration timeout)
      throws TimeoutException, InterruptedException {
    await(timeout, "the outbox emptied", () -> boxline.admin().outboxBacklog().events() == 0);
  }

  /**
   * Waits until every committed event is sequenced and every subscription has handled everything in
   * its partitions (its cursors are at the heads), including events that transactional handlers
   * published in turn. Events set aside for a retry or as dead letters count as handled here:
   * assert them with {@link io.boxline.Admin#failures}.
   *
   * @throws TimeoutException when that takes longer than {@code timeout}; the message names the
   *     subscriptions still behind
   */
  public static void awaitIdle(Boxline boxline, Duration timeout)
      throws TimeoutException, InterruptedException {
    try {
      await(
          timeout,
          "every subscription caught up",
          // Caught up, then nothing in the outbox, then still caught up: an event a transactional
          // handler published commits with that handler's cursor, so it is either in the outbox
          // at the second look or already numbered and behind some cursor at the third.
          () ->
              behind(boxline).isEmpty()
                  && boxline.admin().outboxBacklog().events() == 0
                  && behind(boxline).isEmpty());
    } catch (TimeoutException e) {
      TimeoutException named =
          new TimeoutException(
              e.getMessage()
                  + ": outbox "
                  + boxline.admin().outboxBacklog().events()
                  + " events, behind: "
                  + behind(boxline));
      named.initCause(e);
      throw named;
    }
  }

  /** Subscriptions with events past their cursors, with their backlog. */
  private static List<String> behind(Boxline boxline) {
    List<String> out = new ArrayList<>();
    for (SubscriptionInfo s : boxline.admin().subscriptions()) {
      long backlog = boxline.admin().lag(s.name()).stream().mapToLong(PartitionLag::backlog).sum();
      if (backlog > 0) {
        out.add(s.name() + " (" + backlog + " behind)");
      }
    }
    return out;
  }

  private interface Condition {
    boolean holds();
  }

  /** Polls a cheap condition, at most every 50 ms, up to a deadline. */
  private static void await(Duration timeout, String what, Condition condition)
      throws TimeoutException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    long pause = 1;
    while (!condition.holds()) {
      if (System.nanoTime() - deadline >= 0) {
        throw new TimeoutException("not " + what + " within " + timeout);
      }
      Thread.sleep(pause);
      pause = Math.min(pause * 2, 50);
    }
  }
}
