package io.boxline.testkit.suite.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.TopicInfo;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Store;
import io.boxline.spi.WakeupListener;
import io.boxline.testkit.Await;
import java.sql.Connection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The cross-process wake-ups, method by method: {@link Store#listen} and what it hears of {@link
 * io.boxline.spi.PublishStore}'s {@code announce}, {@code announceIn} and {@code notifyOutbox},
 * sent by another store on the same data (see {@link StoreTarget#anotherStore}).
 */
public abstract class WakeupContract extends StoreContract {
  /** Heads announced to find out that a listener hears; each one new. */
  private long markers;

  @Nested
  class Announce {
    @Test
    void announcedHeadsWakeTheListenerOfAnotherStore() {
      Heard heard = new Heard(() -> -1);
      try (Store other = anotherStore()) {
        assertThat(other.listen(heard)).as("every store here has cross-process wake-ups").isTrue();
        PartitionHead head = new PartitionHead(orders.id(), 1, 7);
        // Until the listener is connected, announcements are lost by design: announce until heard.
        Await.until(
            WAIT,
            "the other store's listener hears " + head,
            () -> {
              store.announce(List.of(head));
              return !heard.covering(0, head).isEmpty();
            });
        assertThat(heard.outboxWakeups()).as("announcing is no outbox wake-up").isZero();
      }
    }
  }

  @Nested
  class AnnounceIn {
    @Test
    void headsAnnouncedInATransactionAreSentWhenItCommitsAndNeverWhenItRollsBack()
        throws Exception {
      TopicInfo direct = store.findTopic(DIRECT).orElseThrow();
      PartitionKey d0 = PartitionKey.of(direct.id(), 0);
      // At each wake-up the listener notes the head it can see then.
      Heard heard = new Heard(() -> store.heads(List.of(d0)).get(0).lastSequence());
      try (Store other = anotherStore()) {
        assertThat(other.listen(heard)).isTrue();
        awaitListening(heard);
        int mark = heard.size();

        PartitionHead rolledBack = new PartitionHead(direct.id(), 0, 2);
        try (Connection tx = store.openTransaction()) {
          store.appendToLog(
              tx, List.of(record(direct, 0, "a", null), record(direct, 0, "b", null)));
          store.announceIn(tx, List.of(rolledBack));
          tx.rollback();
        }
        PartitionHead committed = new PartitionHead(direct.id(), 0, 1);
        boolean inTransaction =
            inTransaction(
                tx -> {
                  store.appendToLog(tx, List.of(record(direct, 0, "c", null)));
                  return store.announceIn(tx, List.of(committed));
                });
        if (!inTransaction) {
          store.announce(List.of(committed)); // the store cannot: the caller announces after commit
        }

        Await.until(
            WAIT,
            "the listener hears " + committed + " when it can read the event",
            () -> heard.covering(mark, committed).stream().anyMatch(w -> w.visible() == 1));
        assertThat(heard.covering(mark, committed))
            .filteredOn(w -> w.heads() != null)
            .as("a wake-up that names the head comes only after the commit")
            .allSatisfy(w -> assertThat(w.visible()).isEqualTo(1));
        assertThat(heard.heads()).as("a rolled-back announcement").doesNotContain(rolledBack);
      }
    }
  }

  @Nested
  class NotifyOutbox {
    @Test
    void anOutboxWakeupInATransactionIsSentWhenItCommitsAndNeverWhenItRollsBack() throws Exception {
      Heard heard = new Heard(() -> -1);
      try (Store other = anotherStore()) {
        assertThat(other.listen(heard)).isTrue();
        awaitListening(heard);

        try (Connection tx = store.openTransaction()) {
          store.append(tx, List.of(record(orders, 0, "k", null)));
          store.notifyOutbox(tx);
          tx.rollback();
        }
        // What is sent after the rollback is heard after anything the rollback could have sent.
        awaitListening(heard);
        assertThat(heard.outboxWakeups()).as("a rolled-back outbox wake-up").isZero();

        inTransaction(
            tx -> {
              store.append(tx, List.of(record(orders, 0, "k", null)));
              store.notifyOutbox(tx);
              return null;
            });
        Await.until(
            WAIT,
            "the other store's listener hears of the outbox",
            heard::outboxWakeups,
            n -> n > 0);
      }
    }
  }

  @Nested
  class Listen {
    @Test
    void aListenerHearsNoOutboxWakeupWhereNoneWasSent() {
      Heard heard = new Heard(() -> -1);
      try (Store other = anotherStore()) {
        assertThat(other.listen(heard)).isTrue();
        awaitListening(heard);
        assertThat(heard.outboxWakeups()).isZero();
        assertThat(heard.heads()).allSatisfy(h -> assertThat(h.topicId()).isEqualTo(orders.id()));
      }
    }
  }

  // ------------------------------------------------------------------ helpers

  /**
   * Announces a new head until {@code heard} hears it: from then on the listener is connected, and
   * hears what is sent later after it.
   */
  private void awaitListening(Heard heard) {
    int mark = heard.size();
    PartitionHead marker = new PartitionHead(orders.id(), 1, ++markers);
    Await.until(
        WAIT,
        "the other store's listener hears " + marker,
        () -> {
          store.announce(List.of(marker));
          return !heard.covering(mark, marker).isEmpty();
        });
  }

  /** What a listener heard, in order; its methods run on the listening store's thread. */
  private static final class Heard implements WakeupListener {
    /**
     * One wake-up: of the outbox, or of the log with its heads (null: look at every partition) and
     * what {@code visible} returned when it came.
     */
    record Wake(boolean outbox, List<PartitionHead> heads, long visible) {}

    private final List<Wake> wakes = new CopyOnWriteArrayList<>();
    private final LongSupplier visible;

    Heard(LongSupplier visible) {
      this.visible = visible;
    }

    @Override
    public void outboxChanged() {
      wakes.add(new Wake(true, List.of(), -1));
    }

    @Override
    public void logAppended(List<PartitionHead> heads) {
      wakes.add(new Wake(false, heads, visible.getAsLong()));
    }

    /** A (re)connection asks for a re-check; it announces nothing. */
    @Override
    public void resynchronize() {}

    int size() {
      return wakes.size();
    }

    long outboxWakeups() {
      return wakes.stream().filter(Wake::outbox).count();
    }

    /** The log wake-ups after the first {@code mark} that name {@code head} or every partition. */
    List<Wake> covering(int mark, PartitionHead head) {
      return wakes.stream()
          .skip(mark)
          .filter(w -> !w.outbox() && (w.heads() == null || w.heads().contains(head)))
          .toList();
    }

    List<PartitionHead> heads() {
      return wakes.stream()
          .filter(w -> w.heads() != null)
          .flatMap(w -> w.heads().stream())
          .toList();
    }
  }
}
