package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.body;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.ConsumerHooks;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.GroupPolicy;
import io.boxline.HandlerTimeoutException;
import io.boxline.RetryPolicy;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.testkit.Await;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Hung handlers: a handler timeout interrupts them, and gives their partition up if need be. */
public abstract class HandlerTimeoutBehaviour extends DatabaseSuite {
  private static final Duration TIMEOUT = Duration.ofMillis(300);

  /**
   * The partition the watchdog gives up is taken again at a check-in that rereads the backlog (the
   * periodic full one: every 10th). Check-ins every 100 ms make that about a second instead of 20 s
   * under the default policy; the generous deadline (20 missed check-ins) keeps a busy machine from
   * making the member look dead.
   */
  private static final GroupPolicy QUICK_CHECK_INS =
      GroupPolicy.DEFAULT.withMinCheckInInterval(Duration.ofMillis(100)).withDeadlineMultiplier(20);

  private Boxline boxline;
  private final CountDownLatch release = new CountDownLatch(1);

  @BeforeEach
  void start() {
    boxline = db.boxline(b -> b);
  }

  @AfterEach
  void letStuckHandlersGo() {
    release.countDown();
  }

  /** Records the failures the retry policy saw. */
  private static ConsumerHooks failures(List<RuntimeException> into) {
    return new ConsumerHooks() {
      @Override
      public void onError(Event event, RuntimeException error, int attempt) {
        into.add(error);
      }
    };
  }

  @Test
  void aHandlerThatSleepsPastTheTimeoutIsInterruptedAndTheAttemptFails() {
    TopicName t = topic(boxline, "acme/timeout/sleepy", 1);
    subscribe(boxline, "sleepy", t);
    Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    List<RuntimeException> errors = new CopyOnWriteArrayList<>();
    Consumer c =
        boxline
            .consumer("sleepy")
            .handlerTimeout(TIMEOUT)
            .retryPolicy(
                RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(20))
                    .inPlaceAttempts(3)
                    .maxAttempts(3)
                    .jitter(0))
            .hooks(failures(errors))
            .handler(
                e -> {
                  int n =
                      calls.computeIfAbsent(body(e), k -> new AtomicInteger()).incrementAndGet();
                  if (body(e).equals("sleepy") && n == 1) {
                    try {
                      Thread.sleep(TimeUnit.MINUTES.toMillis(10));
                    } catch (InterruptedException interrupted) {
                      throw new IllegalStateException("woken", interrupted);
                    }
                  }
                })
            .start();
    boxline.inTransaction(
        tx -> boxline.publisher().publish(tx, SuiteSupport.raw(t, "k", "sleepy")));
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, SuiteSupport.raw(t, "k", "next")));
    Await.until(WAIT, "both handled", () -> c.handledCount() == 2);
    assertThat(calls.get("sleepy")).hasValue(2);
    assertThat(errors)
        .singleElement()
        .isInstanceOf(HandlerTimeoutException.class)
        .satisfies(e -> assertThat(e).hasMessageContaining("ran past its timeout of PT0.3S"));
    assertThat(c.lostCount()).isZero();
  }

  @Test
  void aHandlerThatAlwaysHangsIsDeadLetteredUnderTheRetryPolicy() {
    TopicName t = topic(boxline, "acme/timeout/always", 1);
    subscribe(boxline, "always", t);
    boxline
        .consumer("always")
        .handlerTimeout(TIMEOUT)
        .retryPolicy(
            RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(20))
                .inPlaceAttempts(2)
                .maxAttempts(2)
                .jitter(0))
        .handler(
            e -> {
              if (body(e).equals("hang")) {
                try {
                  Thread.sleep(TimeUnit.MINUTES.toMillis(10));
                } catch (InterruptedException interrupted) {
                  Thread.currentThread().interrupt(); // what well-behaved code does
                  return;
                }
              }
            })
        .start();
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, SuiteSupport.raw(t, "k", "hang")));
    Await.until(WAIT, "a dead letter", () -> boxline.admin().failures("always").deadLetters() == 1);
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("always")))
        .singleElement()
        .satisfies(
            d -> {
              assertThat(d.attempts()).isEqualTo(2);
              assertThat(d.lastError()).contains("ran past its timeout");
            });
  }

  @Test
  void aHandlerThatIgnoresInterruptsLosesItsPartitionAndTheGroupMovesOn() {
    TopicName t = topic(boxline, "acme/timeout/stubborn", 1);
    subscribe(boxline, "stubborn", t);
    boxline.admin().setGroupPolicy("stubborn", QUICK_CHECK_INS);
    AtomicInteger stubbornCalls = new AtomicInteger();
    List<String> handled = new CopyOnWriteArrayList<>();
    Consumer c =
        boxline
            .consumer("stubborn")
            .handlerTimeout(TIMEOUT)
            .concurrency(1)
            .handler(
                e -> {
                  if (body(e).equals("stubborn") && stubbornCalls.incrementAndGet() == 1) {
                    // Ignores every interrupt until the test ends.
                    while (release.getCount() > 0) {
                      try {
                        release.await(10, TimeUnit.MILLISECONDS);
                      } catch (InterruptedException ignored) {
                        // keeps running
                      }
                    }
                  }
                  handled.add(body(e));
                })
            .start();
    boxline.inTransaction(
        tx -> boxline.publisher().publish(tx, SuiteSupport.raw(t, "k", "stubborn")));
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, SuiteSupport.raw(t, "k", "after")));
    Await.until(
        WAIT,
        "the partition given up and its events handled again by a free worker",
        () -> handled.contains("stubborn") && handled.contains("after"));
    assertThat(stubbornCalls.get()).as("delivered again after the give-up").isEqualTo(2);
    assertThat(c.lostCount()).isGreaterThanOrEqualTo(1);
    release.countDown();
    // The stuck call returns into a partition it no longer holds: nothing it commits counts.
    Await.until(WAIT, "the stuck call returned", () -> handled.size() == 3);
    assertThat(handled).containsExactlyInAnyOrder("stubborn", "after", "stubborn");
    Await.until(
        WAIT,
        "the cursor past both events",
        () -> SuiteSupport.totalPosition(boxline.admin().lag("stubborn")) == 2);
    assertThat(stubbornCalls.get()).isEqualTo(2);
  }

  /**
   * The first call that sees the event "sleepy" sleeps until interrupted (then throws); every other
   * call returns. Records per body how many calls began and how many returned.
   */
  private final class Sleeper {
    final Map<String, AtomicInteger> began = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> done = new ConcurrentHashMap<>();
    final List<String> doneInOrder = new CopyOnWriteArrayList<>();
    final AtomicInteger woken = new AtomicInteger();

    void call(List<Event> events) {
      boolean sleep = false;
      for (Event e : events) {
        int n = began.computeIfAbsent(body(e), k -> new AtomicInteger()).incrementAndGet();
        sleep |= body(e).equals("sleepy") && n == 1;
      }
      if (sleep) {
        try {
          Thread.sleep(TimeUnit.MINUTES.toMillis(10));
        } catch (InterruptedException interrupted) {
          woken.incrementAndGet();
          throw new IllegalStateException("woken", interrupted);
        }
      }
      for (Event e : events) {
        done.computeIfAbsent(body(e), k -> new AtomicInteger()).incrementAndGet();
        doneInOrder.add(body(e));
      }
    }
  }

  /**
   * Publishes "sleepy" and "next" on key k and "other" on key j, runs {@code consumer} with the
   * timeout, and checks: the hanging call was interrupted and failed as a timeout, each event
   * completed exactly once, k's events in order, no partition lost.
   */
  private void hangsOnceThenCompletes(
      String name,
      java.util.function.Function<io.boxline.ConsumerBuilder, io.boxline.ConsumerBuilder> kind,
      Sleeper sleeper) {
    TopicName t = topic(boxline, "acme/timeout/" + name, 1);
    subscribe(boxline, name, t);
    List<RuntimeException> errors = new CopyOnWriteArrayList<>();
    Consumer c =
        kind.apply(
                boxline
                    .consumer(name)
                    .handlerTimeout(TIMEOUT)
                    .retryPolicy(
                        RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(20))
                            .inPlaceAttempts(3)
                            .maxAttempts(3)
                            .jitter(0))
                    .hooks(failures(errors)))
            .start();
    boxline.inTransaction(
        tx -> {
          boxline.publisher().publish(tx, SuiteSupport.raw(t, "k", "sleepy"));
          boxline.publisher().publish(tx, SuiteSupport.raw(t, "k", "next"));
          return boxline.publisher().publish(tx, SuiteSupport.raw(t, "j", "other"));
        });
    Await.until(WAIT, "all three handled", () -> c.handledCount() == 3);
    assertThat(sleeper.began.get("sleepy")).as("the hanging call and its retry").hasValue(2);
    assertThat(sleeper.done.keySet()).containsExactlyInAnyOrder("sleepy", "next", "other");
    assertThat(sleeper.done.values()).allSatisfy(n -> assertThat(n).hasValue(1));
    assertThat(sleeper.doneInOrder.stream().filter(b -> !b.equals("other")).toList())
        .containsExactly("sleepy", "next");
    assertThat(sleeper.woken).as("the watchdog interrupted the hanging call").hasValue(1);
    // A transactional batch that fails is redone one event at a time without counting an attempt,
    // so only the other kinds report the timeout to the hooks.
    assertThat(errors).allSatisfy(e -> assertThat(e).isInstanceOf(HandlerTimeoutException.class));
    if (!name.equals("tx")) {
      assertThat(errors).isNotEmpty();
    }
    assertThat(c.lostCount()).isZero();
    c.close();
  }

  @Test
  void aBatchHandlerThatHangsIsInterruptedAndItsBatchRetried() {
    Sleeper sleeper = new Sleeper();
    hangsOnceThenCompletes("batch", b -> b.batchHandler(sleeper::call), sleeper);
  }

  @Test
  void aTransactionalHandlerThatHangsIsInterruptedAndItsTransactionRolledBack() {
    Sleeper sleeper = new Sleeper();
    hangsOnceThenCompletes(
        "tx", b -> b.transactionalHandler((e, tx) -> sleeper.call(List.of(e))), sleeper);
  }

  @Test
  void aHandlerOnAKeyThreadThatHangsIsInterruptedWhileOtherKeysGoOn() {
    Sleeper sleeper = new Sleeper();
    hangsOnceThenCompletes(
        "bykey", b -> b.parallelByKey(4).handler(e -> sleeper.call(List.of(e))), sleeper);
  }

  @Test
  void theTimeoutIsValidated() {
    TopicName t = topic(boxline, "acme/timeout/valid", 1);
    subscribe(boxline, "valid", t);
    assertThatThrownBy(
            () -> boxline.consumer("valid").handlerTimeout(Duration.ofMillis(1)).handler(e -> {}))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("between 10 ms and 1 day");
  }
}
