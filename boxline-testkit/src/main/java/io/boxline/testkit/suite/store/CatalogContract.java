package io.boxline.testkit.suite.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.groups.Tuple.tuple;

import io.boxline.NamespacePath;
import io.boxline.PartitionLag;
import io.boxline.RetentionPolicy;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.spi.CatalogStore;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Settlement;
import io.boxline.testkit.suite.SuiteSupport;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link CatalogStore}, method by method: namespaces, topics, subscriptions, their deletion, cursor
 * rewinds and topics' retention policies.
 */
public abstract class CatalogContract extends StoreContract {
  @Nested
  class CreateNamespace {
    @Test
    void createsEveryMissingParentAndCreatingAgainChangesNothing() {
      store.createNamespace(NamespacePath.of("acme/contract"));
      store.createNamespace(NamespacePath.of("acme/other/leaf"));
      assertThat(store.namespaces())
          .extracting(NamespacePath::toString)
          .contains("acme", "acme/contract", "acme/other", "acme/other/leaf")
          .doesNotHaveDuplicates();
    }
  }

  @Nested
  class CreateTopic {
    @Test
    void createsATopicOnceAndRefusesOtherPartitionsOrSequencing() {
      assertThat(store.createTopic(ORDERS, 2)).as("creating again returns it").isEqualTo(orders);
      assertThatThrownBy(() -> store.createTopic(ORDERS, 3))
          .isInstanceOf(ValidationException.class)
          .hasMessageContaining("partition counts never change");
      assertThatThrownBy(() -> store.createTopic(ORDERS, 2, Sequencing.IN_TRANSACTION))
          .isInstanceOf(ValidationException.class)
          .hasMessageContaining("sequencing never changes");
      assertThat(store.topics()).hasSize(2);
    }
  }

  @Nested
  class FindTopic {
    @Test
    void findsATopicByNameOrIdAndNoUnknownOne() {
      assertThat(store.findTopic(ORDERS)).contains(orders);
      assertThat(store.findTopic(orders.id())).contains(orders);
      assertThat(store.findTopic(TopicName.of("acme/contract", "none"))).isEmpty();
      assertThat(store.findTopic(DIRECT).orElseThrow().sequencing())
          .isEqualTo(Sequencing.IN_TRANSACTION);
    }
  }

  @Nested
  class Topics {
    @Test
    void listsEveryTopic() {
      assertThat(store.topics())
          .extracting(TopicInfo::name)
          .containsExactlyInAnyOrder(ORDERS, DIRECT);
    }
  }

  @Nested
  class Namespaces {
    @Test
    void listsEveryNamespaceCreatedWithItsParents() {
      store.createNamespace(NamespacePath.of("acme/contract/deeper"));
      assertThat(store.namespaces())
          .extracting(NamespacePath::toString)
          .contains("acme", "acme/contract", "acme/contract/deeper");
    }
  }

  @Nested
  class CreateSubscription {
    @Test
    void startsACursorOnEveryPartitionOfItsTopicsOnceAndRefusesOtherTopics() {
      SubscriptionInfo audit =
          store.createSubscription(SubscriptionSpec.of("audit", ORDERS, DIRECT));
      assertThat(store.lag(audit.id()))
          .extracting(PartitionLag::topic, PartitionLag::partition, PartitionLag::position)
          .containsExactlyInAnyOrder(
              tuple(ORDERS, 0, 0L), tuple(ORDERS, 1, 0L), tuple(DIRECT, 0, 0L));
      assertThat(store.createSubscription(SubscriptionSpec.of("audit", DIRECT, ORDERS)))
          .as("creating again returns it")
          .isEqualTo(audit);
      assertThatThrownBy(() -> store.createSubscription(SubscriptionSpec.of("audit", ORDERS)))
          .isInstanceOf(ValidationException.class)
          .hasMessageContaining("already exists with topics");
      assertThat(store.lag(audit.id())).hasSize(3);
    }
  }

  @Nested
  class FindSubscription {
    @Test
    void findsASubscriptionByNameAndNoUnknownOne() {
      assertThat(store.findSubscription("billing")).contains(sub);
      assertThat(store.findSubscription("nobody")).isEmpty();
    }
  }

  @Nested
  class Subscriptions {
    @Test
    void listsSubscriptionsByNameWithTheirTopics() {
      store.createSubscription(SubscriptionSpec.of("audit", ORDERS, DIRECT));
      assertThat(store.subscriptions())
          .extracting(SubscriptionInfo::name)
          .containsExactly("audit", "billing");
      assertThat(store.subscriptions().get(0).topics()).containsExactlyInAnyOrder(ORDERS, DIRECT);
      assertThat(store.subscriptions().get(1)).isEqualTo(sub);
    }
  }

  @Nested
  class RenameSubscription {
    @Test
    void keepsTheSubscriptionAndItsCursors() {
      SubscriptionInfo renamed = store.renameSubscription(sub, "invoicing");
      assertThat(renamed.id()).isEqualTo(sub.id());
      assertThat(renamed.name()).isEqualTo("invoicing");
      assertThat(renamed.topics()).containsExactly(ORDERS);
      assertThat(store.findSubscription("billing")).isEmpty();
      assertThat(store.findSubscription("invoicing")).contains(renamed);
      assertThat(store.lag(sub.id())).hasSize(2);
    }
  }

  @Nested
  class RewindCursors {
    @Test
    void movesEveryCursorOfTheSubscriptionToTheLatestOrEarliestPosition() {
      fiveOnBothPartitions();
      PartitionKey p0 = PartitionKey.of(orders.id(), 0);
      PartitionKey p1 = PartitionKey.of(orders.id(), 1);
      SuiteSupport.fence(store, sub.id(), List.of(p0, p1), new long[] {1, 1}, "me");
      assertThat(store.settle(sub.id(), List.of(Settlement.move(p0, 1, 0, 3))))
          .containsExactly(CommitOutcome.COMMITTED);

      assertThat(store.rewindCursors(sub.id(), StartPosition.latest())).isEqualTo(2);
      assertThat(store.backlogged(sub.id())).isEmpty();
      assertThat(store.rewindCursors(sub.id(), StartPosition.earliest())).isEqualTo(2);
      assertThat(store.lag(sub.id())).extracting(PartitionLag::position).containsOnly(0L);
    }
  }

  @Nested
  class SeekCursors {
    @Test
    void movesTheNamedCursorsBackOrForwardAndLeavesTheOthers() {
      fiveOnBothPartitions();
      PartitionKey p0 = PartitionKey.of(orders.id(), 0);
      PartitionKey p1 = PartitionKey.of(orders.id(), 1);
      assertThat(store.seekCursors(sub.id(), java.util.Map.of(p0, 4L))).isEqualTo(1);
      assertThat(store.lag(sub.id()))
          .extracting(l -> l.partition() + "@" + l.position())
          .containsExactlyInAnyOrder("0@4", "1@0");
      assertThat(store.seekCursors(sub.id(), java.util.Map.of(p0, 2L, p1, 5L))).isEqualTo(2);
      assertThat(store.lag(sub.id()))
          .extracting(l -> l.partition() + "@" + l.position())
          .containsExactlyInAnyOrder("0@2", "1@5");
      assertThat(store.seekCursors(sub.id(), java.util.Map.of(PartitionKey.of(orders.id(), 9), 1L)))
          .as("a partition the subscription does not read")
          .isZero();
    }
  }

  @Nested
  class Retention {
    @Test
    void aTopicIsKeptForeverUntilAPolicyIsSetAndEachTopicHasItsOwn() {
      TopicInfo direct = store.findTopic(DIRECT).orElseThrow();
      assertThat(store.retention(orders.id())).isEqualTo(RetentionPolicy.forever());
      store.setRetention(orders.id(), RetentionPolicy.bySize(10));
      assertThat(store.retention(direct.id())).isEqualTo(RetentionPolicy.forever());
    }
  }

  @Nested
  class SetRetention {
    @Test
    void aTopicsRetentionReadsBackAsSet() {
      assertThat(store.retention(orders.id())).isEqualTo(RetentionPolicy.forever());
      RetentionPolicy p = RetentionPolicy.byAge(Duration.ofDays(7)).maxEventsPerPartition(1_000);
      store.setRetention(orders.id(), p);
      assertThat(store.retention(orders.id())).isEqualTo(p);
      RetentionPolicy size = RetentionPolicy.bySize(50);
      store.setRetention(orders.id(), size);
      assertThat(store.retention(orders.id())).isEqualTo(size);
    }
  }

  @Nested
  class DeleteSubscription {
    @Test
    void takesEverythingItOwnsAndNothingElse() {
      SubscriptionInfo other = store.createSubscription(SubscriptionSpec.of("other", ORDERS));
      List<OutboxRecord> records = List.of(record(orders, 0, "k", null));
      appendAndSequence(records);
      PartitionKey p0 = PartitionKey.of(orders.id(), 0);
      SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");
      Park dead =
          new Park(1, records.get(0).eventId(), "k", "t", ParkState.DEAD, 3, Instant.now(), "x");
      assertThat(SuiteSupport.settle(store, sub.id(), p0, 0, 1, 1, List.of(dead)))
          .isEqualTo(CommitOutcome.COMMITTED);
      store.inboxRecord(sub.id(), "m-1");

      assertThat(store.deleteSubscription(sub)).isTrue();
      assertThat(store.findSubscription("billing")).isEmpty();
      assertThat(store.failureCounts()).isEmpty();
      assertThat(store.inboxSize(sub.id())).isZero();
      assertThat(store.lag(sub.id())).isEmpty();
      assertThat(store.deleteSubscription(sub)).as("deleting again changes nothing").isFalse();
      assertThat(store.lag(other.id())).hasSize(2);
      assertThat(store.readWhere(orders.id(), 0, 0, null, null, 10)).hasSize(1);
      SubscriptionInfo again = store.createSubscription(SubscriptionSpec.of("billing", ORDERS));
      assertThat(again.id()).as("the name can be used again").isNotEqualTo(sub.id());
      assertThat(store.lag(again.id())).extracting(PartitionLag::position).containsOnly(0L);
    }
  }

  @Nested
  class DeleteTopic {
    @Test
    void takesItsEventsCursorsAndKeysAndLeavesOtherTopics() {
      SubscriptionInfo both = store.createSubscription(SubscriptionSpec.of("both", ORDERS, DIRECT));
      appendAndSequence(List.of(record(orders, 0, "k", "idem-1")));
      inTransaction(tx -> store.append(tx, List.of(record(orders, 1, "k", null))));

      assertThat(store.deleteTopic(orders.id())).isTrue();
      assertThat(store.findTopic(ORDERS)).isEmpty();
      assertThat(store.findSubscription("both").orElseThrow().topics()).containsExactly(DIRECT);
      assertThat(store.lag(both.id())).extracting(PartitionLag::topic).containsOnly(DIRECT);
      assertThat(store.outboxBacklog().events()).as("its unsequenced rows are gone").isZero();
      assertThat(store.deleteTopic(orders.id())).isFalse();

      TopicInfo recreated = store.createTopic(ORDERS, 2);
      assertThat(recreated.id()).isNotEqualTo(orders.id());
      List<UUID> owners =
          inTransaction(tx -> store.append(tx, List.of(record(recreated, 0, "k", "idem-1"))));
      assertThat(owners).as("its idempotency keys are gone").containsOnlyNulls();
      assertThat(store.readWhere(recreated.id(), 0, 0, null, null, 10)).isEmpty();
    }
  }

  @Nested
  class DeleteNamespace {
    @Test
    void deletesOnlyAnEmptyNamespace() {
      store.createNamespace(NamespacePath.of("acme/empty/leaf"));
      assertThatThrownBy(() -> store.deleteNamespace(NamespacePath.of("acme/empty")))
          .isInstanceOf(ValidationException.class)
          .hasMessageContaining("not empty")
          .hasMessageContaining("1 namespaces");
      assertThatThrownBy(() -> store.deleteNamespace(NamespacePath.of("acme/contract")))
          .isInstanceOf(ValidationException.class)
          .hasMessageContaining("2 topics");
      assertThat(store.deleteNamespace(NamespacePath.of("acme/empty/leaf"))).isTrue();
      assertThat(store.deleteNamespace(NamespacePath.of("acme/empty"))).isTrue();
      assertThat(store.deleteNamespace(NamespacePath.of("acme/empty"))).isFalse();
      assertThat(store.namespaces())
          .extracting(NamespacePath::toString)
          .doesNotContain("acme/empty", "acme/empty/leaf");
    }
  }
}
