package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.body;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.TopicName;
import io.boxline.testing.BoxlineTesting;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link BoxlineTesting} on a real database, as an application's integration test uses it: what a
 * transaction published, and waiting for handlers without sleeping.
 */
public abstract class TestingSupportBehaviour extends DatabaseSuite {
  private Boxline boxline;

  @BeforeEach
  void start() {
    boxline = db.boxline(b -> b);
  }

  @Test
  void publishedShowsWhatCommittedTransactionsPublishedAndAwaitIdleWaitsForEveryHandler()
      throws Exception {
    TopicName t = topic(boxline, "shop/testing/orders", 3);
    subscribe(boxline, "testing-billing", t);
    boxline.inTransaction(
        tx ->
            boxline
                .publisher()
                .publishAll(
                    tx,
                    List.of(
                        SuiteSupport.raw(t, "o-1", "placed"), SuiteSupport.raw(t, "o-1", "paid"))));
    try {
      boxline.inTransaction(
          tx -> {
            boxline.publisher().publish(tx, SuiteSupport.raw(t, "o-2", "rolled back"));
            throw new IllegalStateException("the order failed");
          });
    } catch (IllegalStateException expected) {
      // nothing of it is published
    }
    BoxlineTesting.awaitSequenced(boxline, Duration.ofSeconds(30));
    assertThat(BoxlineTesting.published(boxline, t))
        .extracting(SuiteSupport::body)
        .containsExactly("placed", "paid");

    List<Event> handled = new CopyOnWriteArrayList<>();
    CountDownLatch release = new CountDownLatch(1);
    try (Consumer c =
        boxline
            .consumer("testing-billing")
            .handler(
                e -> {
                  SuiteSupport.awaitRelease(release);
                  handled.add(e);
                })
            .start()) {
      // While the handler is held, awaitIdle times out and names the subscription behind.
      assertThatThrownBy(() -> BoxlineTesting.awaitIdle(boxline, Duration.ofMillis(300)))
          .isInstanceOf(TimeoutException.class)
          .hasMessageContaining("testing-billing");
      release.countDown();
      BoxlineTesting.awaitIdle(boxline, Duration.ofSeconds(30));
      assertThat(handled).extracting(e -> body(e)).containsExactly("placed", "paid");
    }
  }
}
