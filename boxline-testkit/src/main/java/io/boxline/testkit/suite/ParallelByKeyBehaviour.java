package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.body;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.RetryPolicy;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.testkit.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code parallelByKey}: keys of one partition at once, each key in order, the cursor safe. */
public abstract class ParallelByKeyBehaviour extends DatabaseSuite {
  private Boxline boxline;

  @BeforeEach
  void start() {
    boxline = db.boxline(b -> b);
  }

  private void publish(TopicName t, String key, String body) {
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, SuiteSupport.raw(t, key, body)));
  }

  /** Each key's bodies in the order they were handled. */
  private static Map<String, List<String>> byKey(List<Event> handled) {
    Map<String, List<String>> out = new java.util.HashMap<>();
    for (Event e : handled) {
      out.computeIfAbsent(e.key() == null ? "(none)" : e.key(), k -> new ArrayList<>())
          .add(body(e));
    }
    return out;
  }

  @Test
  void differentKeysOfOnePartitionRunAtOnceAndEachKeyKeepsItsOrder() {
    TopicName t = topic(boxline, "acme/bykey/one", 1);
    subscribe(boxline, "bykey", t);
    // Every key's first event waits until all four keys are in a handler at the same time: only
    // possible when keys of the one partition run at once.
    CountDownLatch allIn = new CountDownLatch(4);
    AtomicInteger timedOut = new AtomicInteger();
    List<Event> handled = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 10; i++) {
      for (String k : List.of("a", "b", "c", "d")) {
        publish(t, k, k + "-" + i);
      }
    }
    SuiteSupport.awaitSequenced(boxline, "bykey", 40);
    Consumer c =
        boxline
            .consumer("bykey")
            .batchSize(100)
            .parallelByKey(4)
            .handler(
                e -> {
                  if (body(e).endsWith("-0")) {
                    allIn.countDown();
                    try {
                      if (!allIn.await(20, TimeUnit.SECONDS)) {
                        timedOut.incrementAndGet();
                      }
                    } catch (InterruptedException ie) {
                      Thread.currentThread().interrupt();
                    }
                  }
                  handled.add(e);
                })
            .start();
    Await.until(WAIT, "40 handled", () -> c.handledCount() == 40);
    assertThat(timedOut.get()).as("the four keys ran at once").isZero();
    Map<String, List<String>> order = byKey(handled);
    for (String k : List.of("a", "b", "c", "d")) {
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        expected.add(k + "-" + i);
      }
      assertThat(order.get(k)).as("key %s in order", k).isEqualTo(expected);
    }
    Await.until(
        WAIT,
        "the cursor past all 40",
        () -> SuiteSupport.totalPosition(boxline.admin().lag("bykey")) == 40);
  }

  @Test
  void aFailingKeyHoldsOnlyItsOwnLaterEvents() {
    TopicName t = topic(boxline, "acme/bykey/fail", 1);
    subscribe(boxline, "picky", t);
    List<Event> handled = new CopyOnWriteArrayList<>();
    Consumer c =
        boxline
            .consumer("picky")
            .parallelByKey(3)
            .retryPolicy(
                RetryPolicy.exponential(Duration.ofMillis(20), Duration.ofMillis(40))
                    .inPlaceAttempts(1)
                    .maxAttempts(3)
                    .jitter(0))
            .handler(
                e -> {
                  if (body(e).equals("bad-0")) {
                    throw new IllegalStateException("poison");
                  }
                  handled.add(e);
                })
            .start();
    for (int i = 0; i < 5; i++) {
      publish(t, "bad", "bad-" + i);
      publish(t, "good", "good-" + i);
      publish(t, null, "keyless-" + i);
    }
    Await.until(
        WAIT,
        "everything but the poison handled, the poison dead-lettered",
        () -> handled.size() == 14 && boxline.admin().failures("picky").deadLetters() == 1);
    Map<String, List<String>> order = byKey(handled);
    assertThat(order.get("good")).containsExactly("good-0", "good-1", "good-2", "good-3", "good-4");
    assertThat(order.get("bad"))
        .as("behind the poison until it was dead-lettered, then in order")
        .containsExactly("bad-1", "bad-2", "bad-3", "bad-4");
    // Counted once its cursor commit returns, a moment after the handler: wait for it.
    Await.until(WAIT, "14 handled events counted", () -> c.handledCount() == 14);
    assertThat(c.handledCount()).isEqualTo(14);
  }

  /**
   * The cursor moves only up to the lowest unfinished event: while the first event (key "slow") is
   * still in its handler, the later keys' events are handled but the cursor stays before it; once
   * it finishes, the cursor moves over all of them.
   */
  @Test
  void theCursorStopsBeforeTheLowestUnfinishedEvent() {
    TopicName t = topic(boxline, "acme/bykey/lowest", 1);
    subscribe(boxline, "bykey-lowest", t);
    publish(t, "slow", "slow-1");
    for (int i = 1; i <= 9; i++) {
      publish(t, "fast-" + i, "fast-" + i);
    }
    SuiteSupport.awaitSequenced(boxline, "bykey-lowest", 10);
    CountDownLatch release = new CountDownLatch(1);
    List<Event> handled = new CopyOnWriteArrayList<>();
    try (Consumer c =
        boxline
            .consumer("bykey-lowest")
            .batchSize(100)
            .parallelByKey(4)
            .handler(
                e -> {
                  if (e.key().equals("slow")) {
                    SuiteSupport.awaitRelease(release);
                  }
                  handled.add(e);
                })
            .start()) {
      Await.until(WAIT, "the nine fast events handled", () -> handled.size() == 9);
      assertThat(handled).noneMatch(e -> e.key().equals("slow"));
      assertThat(SuiteSupport.totalPosition(boxline.admin().lag("bykey-lowest"))).isZero();
      release.countDown();
      Await.until(
          WAIT,
          "the cursor over all ten",
          () -> SuiteSupport.totalPosition(boxline.admin().lag("bykey-lowest")) == 10);
    } finally {
      release.countDown();
    }
  }

  @Test
  void onlyPlainHandlersRunByKey() {
    TopicName t = topic(boxline, "acme/bykey/valid", 1);
    subscribe(boxline, "valid", t);
    assertThatThrownBy(
            () -> boxline.consumer("valid").parallelByKey(4).batchHandler(b -> {}).start())
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("works with handler(...) only");
    assertThatThrownBy(() -> boxline.consumer("valid").parallelByKey(1))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("2 to 256 threads");
  }
}
