package io.boxline.testkit.suite.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.RetentionPolicy;
import io.boxline.StartPosition;
import io.boxline.SubscriptionInfo;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.PurgeResult;
import io.boxline.spi.RetentionStore;
import io.boxline.spi.StoredEvent;
import io.boxline.testkit.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link RetentionStore}, method by method: purging what retention lets go, and the subscriptions
 * that hold it back while they are active.
 */
public abstract class RetentionContract extends StoreContract {
  @Nested
  class MarkActive {
    @Test
    void aSubscriptionMarkedActiveHoldsRetentionBackAndAnAbandonedOneNoLonger() {
      List<OutboxRecord> records = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        records.add(record(orders, 0, "k" + i, null));
      }
      appendAndSequence(records);
      assertThat(sub.start()).isEqualTo(StartPosition.earliest());
      assertThat(sub.lastActive()).isEqualTo(sub.createdAt());
      store.markActive(List.of(sub.id()));
      SubscriptionInfo stamped = store.subscriptions().get(0);
      assertThat(stamped.lastActive()).isAfterOrEqualTo(sub.createdAt());
      // Keep one event per partition; billing's cursor (at 0) holds the other two while it counts
      // as active (abandonAfter 7 days by default) ...
      store.setRetention(orders.id(), RetentionPolicy.bySize(1));
      assertThat(purge().events()).isZero();
      assertThat(store.read(orders.id(), 0, 0, 100)).hasSize(3);
      // ... and not once it has had no live consumer for longer than abandonAfter.
      store.setRetention(
          orders.id(), RetentionPolicy.bySize(1).abandonAfter(Duration.ofMillis(200)));
      Await.until(
          Duration.ofSeconds(10),
          "billing abandoned and its unread events purged",
          () -> {
            purge();
            return store.read(orders.id(), 0, 0, 100).size() == 1;
          });
      assertThat(store.read(orders.id(), 0, 0, 100))
          .extracting(StoredEvent::sequence)
          .containsExactly(3L);
    }
  }

  @Nested
  class Purge {
    @Test
    void keepsEverythingUnderTheForeverPolicyAndWhatASizeLimitKeepsWithoutSubscriptions() {
      store.deleteSubscription(sub);
      List<OutboxRecord> records = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        records.add(record(orders, 0, "k" + i, null));
      }
      appendAndSequence(records);
      assertThat(purge().events()).as("kept forever by default").isZero();
      assertThat(store.read(orders.id(), 0, 0, 100)).hasSize(4);
      store.setRetention(orders.id(), RetentionPolicy.bySize(2));
      Await.until(
          Duration.ofSeconds(10),
          "all but the last two events purged",
          () -> {
            purge();
            return store.read(orders.id(), 0, 0, 100).size() == 2;
          });
      assertThat(store.read(orders.id(), 0, 0, 100))
          .extracting(StoredEvent::sequence)
          .containsExactly(3L, 4L);
    }
  }

  private PurgeResult purge() {
    return store.purge(Duration.ofDays(1), Duration.ofDays(1), Duration.ofDays(1), 100);
  }
}
