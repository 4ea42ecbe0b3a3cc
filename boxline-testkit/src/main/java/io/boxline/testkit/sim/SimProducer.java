package io.boxline.testkit.sim;

import io.boxline.spi.OutboxRecord;
import io.boxline.spi.Store;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

/**
 * A producer: each turn one transaction of one to three messages on its own keys, each with an
 * idempotency key, one in eight scheduled for later. When a commit's answer is lost it publishes
 * the same messages again (new event ids, same idempotency keys) before anything new, as the
 * documented recipe says.
 */
final class SimProducer {
  private final int index;
  private final Store store;
  private final long topicId;
  private final int partitions;
  private final int keys;
  private final SimClock clock;
  private final Random random;
  private final Faults faults;
  private final Ledger ledger;
  private final int[] nextN;

  /** Messages whose commit answer was lost: published again on the next turn. */
  private List<Ledger.Message> again = List.of();

  SimProducer(
      int index,
      Store store,
      long topicId,
      int partitions,
      int keys,
      SimClock clock,
      Random random,
      Faults faults,
      Ledger ledger) {
    this.index = index;
    this.store = store;
    this.topicId = topicId;
    this.partitions = partitions;
    this.keys = keys;
    this.clock = clock;
    this.random = random;
    this.faults = faults;
    this.ledger = ledger;
    this.nextN = new int[keys];
  }

  String name() {
    return "producer-" + index;
  }

  boolean idle() {
    return again.isEmpty();
  }

  /** One transaction; returns what happened, for the trace. */
  String turn(boolean produceNew) {
    List<Ledger.Message> messages;
    if (!again.isEmpty()) {
      messages = again;
    } else if (produceNew) {
      messages = new ArrayList<>();
      int n = 1 + random.nextInt(3);
      for (int i = 0; i < n; i++) {
        int k = random.nextInt(keys);
        int failures = random.nextInt(10) < 8 ? 0 : 1 + random.nextInt(2);
        boolean poison = random.nextInt(40) == 0;
        messages.add(
            new Ledger.Message(index, "p" + index + "k" + k, ++nextN[k], failures, poison));
      }
    } else {
      return "idle";
    }
    List<OutboxRecord> records = new ArrayList<>();
    List<UUID> ids = new ArrayList<>();
    for (Ledger.Message m : messages) {
      UUID id = new UUID(random.nextLong(), random.nextLong());
      ids.add(id);
      // One in eight is scheduled (a task's run time, a delayed event) up to three seconds ahead.
      java.time.Instant at =
          random.nextInt(8) == 0 ? clock.instant().plusMillis(1 + random.nextInt(3_000)) : null;
      ledger.attempted(id, m, at);
      records.add(
          new OutboxRecord(
              id,
              topicId,
              Math.floorMod(m.key().hashCode(), partitions),
              m.key(),
              "sim.message",
              "sim",
              "text/plain",
              m.payload(),
              Map.of(),
              m.idempotencyKey(),
              at));
    }
    Connection tx = store.openTransaction();
    try {
      faults.through("append", () -> store.append(tx, records));
    } catch (Faults.LostCall e) {
      // The error came before the commit: the transaction rolls back, the messages are given up.
      rollback(tx);
      again = List.of();
      return "append lost (" + e.ran + "), rolled back";
    }
    if (faults.hit("producer rolls back")) {
      rollback(tx);
      again = List.of();
      return "rolled back";
    }
    Faults.Call c = faults.call("commit");
    if (c == Faults.Call.LOST_BEFORE) {
      rollback(tx); // what the server does with a connection that went away before COMMIT
      ledger.committed(ids, Ledger.Commit.UNKNOWN);
      again = messages;
      return "commit lost before the database";
    }
    commit(tx);
    if (c == Faults.Call.LOST_AFTER) {
      ledger.committed(ids, Ledger.Commit.UNKNOWN);
      again = messages;
      return "commit answer lost";
    }
    ledger.committed(ids, Ledger.Commit.ACKED);
    again = List.of();
    return "committed " + messages.size();
  }

  private static void commit(Connection tx) {
    try {
      tx.commit();
      tx.close();
    } catch (SQLException e) {
      throw new IllegalStateException("the in-memory commit failed", e);
    }
  }

  private static void rollback(Connection tx) {
    try {
      tx.rollback();
      tx.close();
    } catch (SQLException e) {
      throw new IllegalStateException("the in-memory rollback failed", e);
    }
  }
}
