package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.EventTypes;
import io.boxline.OutgoingEvent;
import io.boxline.Partitioner;
import io.boxline.Publisher;
import io.boxline.Sequencing;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.suite.SuiteSupport.Recorder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@code inTransaction} against a model: random scripts of publishes (some with idempotency keys),
 * savepoints, rollbacks to them, releases, whole rollbacks, nested transactions that commit or
 * fail, and an end that commits or throws, on an in-transaction topic and a sequencer topic at
 * once. Each subscription must get exactly the events the model says committed, each once, in the
 * model's order per partition (in-transaction topic: commit order; sequencer topic: publish order
 * within each transaction), and every publish must say "duplicate" exactly when the model does. A
 * quarter of the scripts run in plain transactions of the test's own instead. One subscription's
 * handlers run on the committing threads, the other's on workers.
 */
public abstract class TransactionModelBehaviour extends DatabaseSuite {
  private static final int TRANSACTIONS = 80;

  private record Pub(
      TopicName topic, String key, String body, int transaction, String idempotencyKey) {}

  private static final class Savepointed {
    final Savepoint savepoint;
    final int pending;

    Savepointed(Savepoint savepoint, int pending) {
      this.savepoint = savepoint;
      this.pending = pending;
    }
  }

  private static final class RollBack extends RuntimeException {
    RollBack() {
      super("the script ends with a rollback", null, false, false);
    }
  }

  private Boxline boxline;
  private TopicName direct;
  private TopicName queued;
  private Random random;
  private long seed;
  private int bodies;
  private int transactions;
  private final List<Pub> committed = new ArrayList<>();
  private final Set<String> committedKeys = new HashSet<>();

  @Test
  void inTransactionPublishesExactlyWhatARandomScriptCommitted() {
    seed = System.nanoTime();
    random = new Random(seed);
    boxline = db.boxline(EventTypes.empty());
    direct = topic(boxline, "acme/model/direct", 2, Sequencing.IN_TRANSACTION);
    queued = topic(boxline, "acme/model/queued", 2);
    subscribe(boxline, "inline", direct, queued);
    subscribe(boxline, "workers", direct, queued);
    Recorder inline = new Recorder();
    Recorder workers = new Recorder();
    io.boxline.Consumer inlineConsumer =
        boxline.consumer("inline").handleOnCommittingThread(true).handler(inline::record).start();
    boxline.consumer("workers").handler(workers::record).start();

    for (int i = 0; i < TRANSACTIONS; i++) {
      List<Pub> pending = new ArrayList<>();
      try {
        if (random.nextInt(4) == 0) {
          commit(plainTransaction(pending));
        } else {
          commit(boxline.inTransaction(tx -> script(tx, true, pending)));
        }
      } catch (RollBack expected) {
        // nothing of it committed
      }
    }

    for (var entry : List.of(Map.entry("inline", inline), Map.entry("workers", workers))) {
      Recorder seen = entry.getValue();
      Await.until(
          WAIT,
          committed.size() + " events on " + entry.getKey(),
          () -> seen.size() >= committed.size());
      SuiteSupport.awaitCaughtUp(boxline, entry.getKey());
      assertThat(seen.all.stream().map(SuiteSupport::body).toList())
          .as("subscription %s, seed %d", entry.getKey(), seed)
          .containsExactlyInAnyOrderElementsOf(committed.stream().map(Pub::body).toList());
      checkOrder(entry.getKey(), seen);
    }
    // One producer thread and caught-up consumers: many commits are handled on their own thread.
    assertThat(inlineConsumer.committingThreadBatches())
        .as("batches handled on committing threads")
        .isPositive();
  }

  /**
   * The same script in a transaction of the test's own (publish on a plain connection), without
   * nested transactions: a nested {@code inTransaction} would wait for the partitions this one
   * locked at its publishes.
   */
  private List<Pub> plainTransaction(List<Pub> pending) {
    try (Connection tx = db.dataSource().getConnection()) {
      tx.setAutoCommit(false);
      try {
        List<Pub> done = script(tx, false, pending);
        tx.commit();
        return done;
      } catch (RuntimeException e) {
        tx.rollback();
        throw e;
      }
    } catch (SQLException e) {
      throw new IllegalStateException("seed " + seed + ": plain transaction failed", e);
    }
  }

  /** Runs one transaction's script; returns what it published and kept, or throws RollBack. */
  private List<Pub> script(Connection tx, boolean outer, List<Pub> pending) throws SQLException {
    int id = ++transactions;
    Publisher publisher = boxline.publisher();
    List<Savepointed> savepoints = new ArrayList<>();
    int ops = 1 + random.nextInt(8);
    for (int i = 0; i < ops; i++) {
      int op = random.nextInt(100);
      if (op < 50) {
        publish(publisher, tx, outer, id, pending);
      } else if (op < 62) {
        savepoints.add(new Savepointed(tx.setSavepoint(), pending.size()));
      } else if (op < 72 && !savepoints.isEmpty()) {
        int j = random.nextInt(savepoints.size());
        tx.rollback(savepoints.get(j).savepoint);
        pending.subList(savepoints.get(j).pending, pending.size()).clear();
        savepoints.subList(j + 1, savepoints.size()).clear();
      } else if (op < 78 && !savepoints.isEmpty()) {
        int j = random.nextInt(savepoints.size());
        tx.releaseSavepoint(savepoints.get(j).savepoint);
        savepoints.subList(j, savepoints.size()).clear();
      } else if (op < 83) {
        tx.rollback();
        pending.clear();
        savepoints.clear();
      } else if (op < 93 && outer) {
        List<Pub> inner = new ArrayList<>();
        try {
          commit(boxline.inTransaction(nested -> script(nested, false, inner)));
        } catch (RollBack expected) {
          // the nested transaction rolled back alone
        }
      }
    }
    if (random.nextInt(5) == 0) {
      throw new RollBack();
    }
    return pending;
  }

  private void publish(
      Publisher publisher, Connection tx, boolean outer, int id, List<Pub> pending) {
    TopicName t = random.nextBoolean() ? direct : queued;
    String key = "k" + random.nextInt(4);
    // Nested transactions publish without idempotency keys: claiming a key the outer transaction
    // holds would wait for the outer one, which waits for the nested one.
    String idempotencyKey = outer && random.nextInt(4) == 0 ? "i" + random.nextInt(6) : null;
    String body = "t" + id + "-" + ++bodies;
    boolean duplicate =
        idempotencyKey != null
            && (committedKeys.contains(t + "/" + idempotencyKey)
                || pending.stream()
                    .anyMatch(p -> p.topic.equals(t) && idempotencyKey.equals(p.idempotencyKey())));
    boolean told =
        publisher
            .publish(
                tx,
                OutgoingEvent.builder(t)
                    .type("test.model")
                    .key(key)
                    .contentType("text/plain")
                    .payload(body.getBytes(StandardCharsets.UTF_8))
                    .idempotencyKey(idempotencyKey)
                    .build())
            .duplicate();
    assertThat(told)
        .as("seed %d: duplicate flag of %s (idempotency key %s)", seed, body, idempotencyKey)
        .isEqualTo(duplicate);
    if (!duplicate) {
      pending.add(new Pub(t, key, body, id, idempotencyKey));
    }
  }

  private void commit(List<Pub> done) {
    committed.addAll(done);
    for (Pub p : done) {
      if (p.idempotencyKey() != null) {
        committedKeys.add(p.topic() + "/" + p.idempotencyKey());
      }
    }
  }

  private void checkOrder(String subscription, Recorder seen) {
    for (TopicName t : List.of(direct, queued)) {
      for (int partition = 0; partition < 2; partition++) {
        int p = partition;
        List<Event> delivered =
            seen.all.stream().filter(e -> e.topic().equals(t) && e.partition() == p).toList();
        List<Pub> expected =
            committed.stream()
                .filter(
                    e ->
                        e.topic().equals(t)
                            && Partitioner.kafkaCompatible().partition(e.key(), 2) == p)
                .toList();
        List<String> got = delivered.stream().map(SuiteSupport::body).toList();
        if (t.equals(direct)) {
          assertThat(got)
              .as("seed %d, %s, %s#%d: commit order", seed, subscription, t, p)
              .containsExactlyElementsOf(expected.stream().map(Pub::body).toList());
        } else {
          // A nested transaction commits first but may hold the later outbox ids: only each
          // transaction's own order is fixed.
          for (int tx : expected.stream().map(Pub::transaction).distinct().toList()) {
            assertThat(got.stream().filter(b -> b.startsWith("t" + tx + "-")).toList())
                .as("seed %d, %s, %s#%d, transaction %d", seed, subscription, t, p, tx)
                .containsExactlyElementsOf(
                    expected.stream().filter(e -> e.transaction() == tx).map(Pub::body).toList());
          }
        }
      }
    }
  }
}
