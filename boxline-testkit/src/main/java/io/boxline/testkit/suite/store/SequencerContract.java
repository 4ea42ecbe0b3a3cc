package io.boxline.testkit.suite.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.PartitionLag;
import io.boxline.spi.LeaseStatus;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.SequencerStore;
import io.boxline.spi.StoredEvent;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link SequencerStore}, method by method: the sequencer's lease, sequencing the outbox into the
 * log, and setting aside rows that name no partition.
 */
public abstract class SequencerContract extends StoreContract {
  @Nested
  class AcquireSequencerLease {
    @Test
    void theLeaseHasOneHolder() {
      assertThat(store.acquireSequencerLease("a", TTL).held()).isTrue();
      assertThat(store.acquireSequencerLease("b", TTL)).isEqualTo(LeaseStatus.NOT_HELD);
      assertThat(store.sequence("b", TTL, 10, (t, k) -> 0).leaseHeld()).isFalse();
    }
  }

  @Nested
  class ReleaseSequencerLease {
    @Test
    void letsAnotherOwnerTakeTheLease() {
      assertThat(store.acquireSequencerLease("a", TTL).held()).isTrue();
      assertThat(store.acquireSequencerLease("b", TTL)).isEqualTo(LeaseStatus.NOT_HELD);
      store.releaseSequencerLease("a");
      assertThat(store.acquireSequencerLease("b", TTL).held()).isTrue();
      assertThat(store.acquireSequencerLease("a", TTL)).isEqualTo(LeaseStatus.NOT_HELD);
    }
  }

  @Nested
  class Sequence {
    @Test
    void appendedRowsAreSequencedGapFreeInPublishOrderAndReadBackExactly() {
      List<OutboxRecord> records = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        records.add(record(orders, i % 2, "k" + i, null));
      }
      assertThat(store.acquireSequencerLease("me", TTL)).isNotEqualTo(LeaseStatus.NOT_HELD);
      SequencedBatch batch = appendAndSequence(records);
      assertThat(batch.leaseHeld()).isTrue();
      assertThat(batch.events()).isEqualTo(5);
      assertThat(store.sequence("me", TTL, 1000, (t, k) -> 0).events()).isZero();
      List<StoredEvent> p0 = store.read(orders.id(), 0, 0, 100);
      assertThat(p0).extracting(StoredEvent::sequence).containsExactly(1L, 2L, 3L);
      assertThat(p0).extracting(StoredEvent::key).containsExactly("k0", "k2", "k4");
      StoredEvent first = p0.get(0);
      OutboxRecord sent = records.get(0);
      assertThat(first.id()).isEqualTo(sent.eventId());
      assertThat(first.type()).isEqualTo(sent.type());
      assertThat(first.source()).isEqualTo(sent.source());
      assertThat(first.contentType()).isEqualTo(sent.contentType());
      assertThat(first.payload()).isEqualTo(sent.payload());
      assertThat(first.headers()).isEqualTo(sent.headers());
      assertThat(first.malformed()).isNull();
      assertThat(store.read(orders.id(), 0, 1, 1))
          .extracting(StoredEvent::sequence)
          .containsExactly(2L);
      assertThat(store.read(orders.id(), 1, 0, 100))
          .extracting(StoredEvent::key)
          .containsExactly("k1", "k3");
      assertThat(store.lag(sub.id()))
          .extracting(PartitionLag::lastSequence)
          .containsExactlyInAnyOrder(3L, 2L);
    }
  }

  @Nested
  class SetAsideUnplaceable {
    @Test
    void rowsNamingNoPartitionThatExistsAreSetAside() {
      assertThat(store.setAsideUnplaceable()).isZero();
      OutboxRecord good = record(orders, 1, "k", null);
      OutboxRecord lost = record(orders, 7, "k", null); // the topic has partitions 0 and 1
      inTransaction(tx -> store.append(tx, List.of(good, lost)));
      assertThat(store.setAsideUnplaceable()).isEqualTo(1);
      assertThat(store.setAsideUnplaceable()).isZero();
      assertThat(appendAndSequence(List.of()).events()).isEqualTo(1);
      assertThat(store.read(orders.id(), 1, 0, 10))
          .extracting(StoredEvent::id)
          .containsExactly(good.eventId());
    }
  }
}
