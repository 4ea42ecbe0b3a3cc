package io.boxline.testkit.suite.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.spi.InboxStore;
import java.sql.Connection;
import java.util.Map;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** {@link InboxStore}, method by method: the keys of messages a subscription has handled. */
public abstract class InboxContract extends StoreContract {
  @Nested
  class InboxRecord {
    @Test
    void aRecordedKeyIsSeen() {
      assertThat(store.inboxSeen(sub.id(), "m-1")).isFalse();
      store.inboxRecord(sub.id(), "m-1");
      assertThat(store.inboxSeen(sub.id(), "m-1")).isTrue();
    }
  }

  @Nested
  class InboxSeen {
    @Test
    void aKeyIsSeenOnlyByTheSubscriptionThatRecordedIt() {
      SubscriptionInfo audit = store.createSubscription(SubscriptionSpec.of("audit", ORDERS));
      store.inboxRecord(sub.id(), "m-1");
      assertThat(store.inboxSeen(sub.id(), "m-1")).isTrue();
      assertThat(store.inboxSeen(sub.id(), "m-2")).isFalse();
      assertThat(store.inboxSeen(audit.id(), "m-1")).isFalse();
    }
  }

  @Nested
  class InboxClaim {
    @Test
    void aKeyIsClaimedOnce() {
      assertThat((boolean) inTransaction(tx -> store.inboxClaim(tx, sub.id(), "m-2"))).isTrue();
      assertThat((boolean) inTransaction(tx -> store.inboxClaim(tx, sub.id(), "m-2"))).isFalse();
      assertThat(store.inboxSeen(sub.id(), "m-2")).isTrue();
    }

    @Test
    void aRolledBackClaimIsForgotten() throws Exception {
      try (Connection tx = store.openTransaction()) {
        assertThat(store.inboxClaim(tx, sub.id(), "m-3")).isTrue();
        tx.rollback();
      }
      assertThat(store.inboxSeen(sub.id(), "m-3")).as("a rolled-back claim is forgotten").isFalse();
    }
  }

  @Nested
  class InboxSize {
    @Test
    void countsTheSubscriptionsKeys() {
      store.inboxRecord(sub.id(), "m-1");
      store.inboxRecord(sub.id(), "m-2");
      assertThat(store.inboxSize(sub.id())).isEqualTo(2);
    }
  }

  @Nested
  class InboxSizes {
    @Test
    void countEachSubscriptionsKeysByName() {
      store.inboxRecord(sub.id(), "m-1");
      store.inboxRecord(sub.id(), "m-2");
      assertThat(store.inboxSizes()).isEqualTo(Map.of("billing", 2L));
      SubscriptionInfo audit = store.createSubscription(SubscriptionSpec.of("audit", ORDERS));
      store.inboxRecord(audit.id(), "m-1");
      assertThat(store.inboxSizes()).containsEntry("billing", 2L).containsEntry("audit", 1L);
    }
  }
}
