package io.boxline.testkit.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.GroupPolicy;
import io.boxline.OutgoingEvent;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.SuiteSupport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;

/** A group policy's batch size reaches running consumers and overrides their own. */
class PostgresPolicyBatchSizeTest {
  @Test
  void aPolicyBatchSizeOverridesTheConsumersOwnAtRuntime() {
    try (TestDatabase db = TestDatabase.create("policybatch")) {
      Boxline boxline = db.boxline(b -> b);
      TopicName t = SuiteSupport.topic(boxline, "acme/batch/events", 1);
      SuiteSupport.subscribe(boxline, "batches", t);
      boxline
          .admin()
          .setGroupPolicy(
              "batches", GroupPolicy.DEFAULT.withMinCheckInInterval(Duration.ofMillis(100)));
      List<Integer> sizes = new CopyOnWriteArrayList<>();
      Consumer c =
          boxline.consumer("batches").batchSize(500).batchHandler(b -> sizes.add(b.size())).start();
      publish(boxline, t, 1_000);
      Await.until(Duration.ofSeconds(30), "1,000 handled", () -> c.handledCount() == 1_000);
      assertThat(sizes).anyMatch(n -> n > 7); // its own 500 while the policy says nothing

      boxline
          .admin()
          .setGroupPolicy(
              "batches",
              GroupPolicy.DEFAULT.withMinCheckInInterval(Duration.ofMillis(100)).withBatchSize(7));
      long before = c.checkInCount();
      Await.until(
          Duration.ofSeconds(30), "a check-in after the change", () -> c.checkInCount() > before);
      sizes.clear();
      publish(boxline, t, 1_000);
      Await.until(Duration.ofSeconds(30), "2,000 handled", () -> c.handledCount() == 2_000);
      assertThat(sizes).isNotEmpty().allMatch(n -> n <= 7);
    }
  }

  @Test
  void aBatchSizeOutOfRangeIsRefused() {
    Assertions.assertThatThrownBy(() -> GroupPolicy.DEFAULT.withBatchSize(10_001))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("batchSize must be between 1 and 10,000");
  }

  private static void publish(Boxline boxline, TopicName t, int n) {
    List<Object> events = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      events.add(OutgoingEvent.builder(t).type("t").key("k" + i).payload(new byte[4]).build());
    }
    boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, events));
  }
}
