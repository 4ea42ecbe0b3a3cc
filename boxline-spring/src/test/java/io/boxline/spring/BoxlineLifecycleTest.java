package io.boxline.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.BoxlineException;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.StartPosition;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.ApplicationContextException;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * {@link BoxlineLifecycle} in a plain Spring context on PostgreSQL: Boxline is built by its bean,
 * started (and migrated) when the context is refreshed, closed when it closes, within the stop
 * timeout.
 */
class BoxlineLifecycleTest {
  private static final NamespacePath NS = NamespacePath.of("acme/life");
  private static final TopicName TOPIC = TopicName.of(NS, "orders");

  private TestDatabase db;

  @BeforeEach
  void createDatabase() {
    db = TestDatabase.create("lifecycle");
  }

  @AfterEach
  void dropDatabase() {
    db.close();
  }

  private Boxline build() {
    return Boxline.builder()
        .store(JdbcStore.builder(db.dataSource()).schema(db.schema()).build())
        .sequencerLease(Duration.ofSeconds(3))
        .build();
  }

  private int boxlineTables() {
    return new JdbcTemplate(db.dataSource())
        .queryForObject(
            "select count(*) from information_schema.tables where table_schema = ?",
            Integer.class,
            db.schema());
  }

  private static void declare(Boxline b) {
    b.admin().createNamespace(NS);
    b.admin().createTopic(TOPIC, 2);
    b.admin()
        .createSubscription(SubscriptionSpec.of("slow", TOPIC).startAt(StartPosition.earliest()));
  }

  private GenericApplicationContext context(Boxline boxline, BoxlineLifecycle lifecycle) {
    GenericApplicationContext context = new GenericApplicationContext();
    context.registerBean(
        "boxline", Boxline.class, () -> boxline, d -> d.setDestroyMethodName("close"));
    context.registerBean("boxlineLifecycle", BoxlineLifecycle.class, () -> lifecycle);
    return context;
  }

  @Test
  void startsWhenTheContextIsRefreshedOnceAndClosesWhenItClosesOnce() {
    Boxline boxline = build();
    AtomicInteger afterStart = new AtomicInteger();
    BoxlineLifecycle lifecycle =
        new BoxlineLifecycle(
            boxline,
            b -> {
              afterStart.incrementAndGet();
              declare(b);
            },
            Duration.ofSeconds(30));
    GenericApplicationContext context = context(boxline, lifecycle);
    assertThatThrownBy(boxline::admin)
        .as("built, not started")
        .isInstanceOf(BoxlineException.class)
        .hasMessageContaining("call start()");
    assertThat(boxlineTables()).as("not migrated before the context starts").isZero();

    context.refresh();
    assertThat(lifecycle.isRunning()).isTrue();
    assertThat(boxlineTables()).as("migrated at start").isPositive();
    assertThat(boxline.admin().subscription("slow")).as("afterStart ran").isPresent();
    lifecycle.start();
    context.start();
    assertThat(afterStart).as("start is idempotent").hasValue(1);
    boxline.inTransaction(
        tx ->
            boxline
                .publisher()
                .publish(tx, OutgoingEvent.builder(TOPIC).type("t").key("k").build()));

    context.close();
    assertThat(lifecycle.isRunning()).isFalse();
    assertThatThrownBy(boxline::admin).hasMessageContaining("closed");
    lifecycle.stop(); // a second stop, and the destroy method's close, change nothing
    context.close();
    boxline.close();
    assertThatThrownBy(lifecycle::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cannot start again");
  }

  @Test
  void aFailingAfterStartFailsTheRefreshAndClosesBoxline() {
    Boxline boxline = build();
    BoxlineLifecycle lifecycle =
        new BoxlineLifecycle(
            boxline,
            b -> {
              throw new IllegalStateException("no such topic (expected by the test)");
            },
            Duration.ofSeconds(30));
    GenericApplicationContext context = context(boxline, lifecycle);
    assertThatThrownBy(context::refresh)
        .isInstanceOf(ApplicationContextException.class)
        .hasRootCauseMessage("no such topic (expected by the test)");
    assertThat(lifecycle.isRunning()).isFalse();
    assertThatThrownBy(boxline::admin).hasMessageContaining("closed");
  }

  @Test
  void closingWaitsAtMostTheStopTimeout() throws Exception {
    Boxline boxline = build();
    BoxlineLifecycle lifecycle =
        new BoxlineLifecycle(boxline, BoxlineLifecycleTest::declare, Duration.ofMillis(500));
    GenericApplicationContext context = context(boxline, lifecycle);
    context.refresh();
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean left = new AtomicBoolean();
    // A consumer the application started itself: Boxline.close waits for its handler up to the
    // consumer's shutdown timeout (a minute), longer than the lifecycle's stop timeout.
    boxline
        .consumer("slow")
        .shutdownTimeout(Duration.ofMinutes(1))
        .handler(
            e -> {
              entered.countDown();
              try {
                release.await();
              } catch (InterruptedException abandoned) {
                Thread.currentThread().interrupt();
              } finally {
                left.set(true);
              }
            })
        .start();
    boxline.inTransaction(
        tx ->
            boxline
                .publisher()
                .publish(tx, OutgoingEvent.builder(TOPIC).type("t").key("k").build()));
    assertThat(entered.await(30, TimeUnit.SECONDS)).as("the handler is running").isTrue();

    long began = System.nanoTime();
    lifecycle.stop();
    Duration took = Duration.ofNanos(System.nanoTime() - began);
    try {
      assertThat(took).as("stop returned after its timeout").isLessThan(Duration.ofSeconds(10));
      assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(500));
      assertThat(left).as("the handler was still running when stop returned").isFalse();
      assertThat(lifecycle.isRunning()).isFalse();
    } finally {
      release.countDown();
    }
    Await.until(Duration.ofSeconds(30), "the handler returned", left::get);
    context.close();
  }
}
