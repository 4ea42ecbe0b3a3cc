package io.boxline.jdbc.internal;

import io.boxline.StoreException;
import io.boxline.spi.PartitionAssigner;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.SequencePlan;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.StoredEvent;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The sequencer's batch in several statements in one open transaction, the same on every dialect:
 * renew the lease, take the oldest outbox rows, place and number them ({@link SequencePlan}),
 * advance their partitions, append them to the log, remove them from the outbox, wake the
 * consumers. A subclass runs each step's statements: their names, how they bind, how a list of rows
 * travels, whether taking a row already deletes it. PostgreSQL runs these steps when its
 * one-statement batch cannot place the rows ({@link PostgresSequencer}); MariaDB / MySQL and H2 run
 * them for every batch ({@link PollingSequencing}).
 *
 * @param <R> what a dialect keeps of a taken outbox row for its later steps
 */
abstract class SqlSequencer<R> {
  final JdbcSql db;

  SqlSequencer(JdbcSql db) {
    this.db = db;
  }

  /** One outbox row taken by the sequencer: what places it, and what the dialect keeps of it. */
  record Taken<R>(long outboxId, long topicId, int partition, String key, R row) {}

  /**
   * Renews the sequencer lease row for {@code owner} in the open transaction; returns the lease's
   * version (0 where partitions keep none), or null when another process holds the lease. May set
   * {@code step} to what runs.
   */
  abstract Long lockSequencer(Connection tx, Step step, String owner, Duration ttl)
      throws SQLException;

  /**
   * One row of {@code take_outbox}, or of {@code take_outbox_events} (the rows with their events in
   * full) when {@code events}.
   */
  abstract Taken<R> taken(ResultSet rs, boolean events) throws SQLException;

  /**
   * Locks the partitions of {@code plan} (in its lock order), numbers the plan after their last
   * sequences and moves each one's last sequence to the plan's head, at lease {@code version}. Sets
   * {@code step} to what runs.
   */
  abstract void advancePartitions(Connection tx, Step step, SequencePlan plan, long version)
      throws SQLException;

  /**
   * Runs {@code append_log}: the taken rows (in outbox order) into the log at the partitions and
   * sequences of {@code plan}, row {@code i} of the plan being {@code taken.get(i)}. Returns the
   * rows appended.
   */
  abstract int appendLog(Connection tx, List<Taken<R>> taken, SequencePlan plan)
      throws SQLException;

  /**
   * Removes the taken rows from the outbox, unless taking them ({@code take_outbox}) deleted them.
   * Sets {@code step} to what runs.
   */
  abstract void deleteOutbox(Connection tx, Step step, List<Taken<R>> taken) throws SQLException;

  /**
   * Whatever tells consumers about {@code heads} once the transaction commits. Leaves {@code step}
   * at the name under which a failure from here on (the commit's too) is reported.
   */
  abstract void wake(Connection tx, Step step, List<PartitionHead> heads) throws SQLException;

  /**
   * The event of a row taken with {@code events} (its sequence not yet set), which the batch hands
   * to consumers in this process.
   */
  StoredEvent event(R row) {
    throw new IllegalStateException(getClass().getSimpleName() + " hands no events over");
  }

  /** The partition in {@code column}, or -1 where the row has none. */
  static int partitionOrNone(ResultSet rs, int column) throws SQLException {
    int partition = rs.getInt(column);
    return rs.wasNull() ? -1 : partition;
  }

  /**
   * One batch of up to {@code maxEvents} outbox rows in the open transaction {@code tx} (the caller
   * commits); see {@link io.boxline.spi.SequencerStore}. With {@code returnEvents} the batch
   * carries the moved events, read in full by {@code take_outbox_events}. Sets {@code step} to what
   * runs, starting from {@code lock_sequencer}.
   */
  final SequencedBatch sequenceIn(
      Connection tx,
      Step step,
      String owner,
      Duration ttl,
      int maxEvents,
      PartitionAssigner assigner,
      boolean returnEvents)
      throws SQLException {
    Long version = lockSequencer(tx, step, owner, ttl);
    if (version == null) {
      return SequencedBatch.NOT_LEADER;
    }
    step.at(returnEvents ? "take_outbox_events" : "take_outbox");
    List<Taken<R>> taken = new ArrayList<>();
    try (PreparedStatement ps = tx.prepareStatement(db.sql(step.name()))) {
      ps.setInt(1, maxEvents);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          taken.add(taken(rs, returnEvents));
        }
      }
    }
    if (taken.isEmpty()) {
      return SequencedBatch.EMPTY;
    }
    // Outbox order is publish order; DELETE ... RETURNING does not promise any order.
    taken.sort(Comparator.comparingLong(Taken::outboxId));
    SequencePlan plan = new SequencePlan(assigner);
    for (Taken<R> t : taken) {
      plan.add(t.topicId(), t.partition(), t.key());
    }
    advancePartitions(tx, step, plan, version);
    List<PartitionHead> heads = plan.heads();
    step.at("append_log");
    int n = appendLog(tx, taken, plan);
    if (n != taken.size()) {
      throw new StoreException(
          "the sequencer appended " + n + " of " + taken.size() + " outbox rows",
          new SQLException("append_log count mismatch"));
    }
    deleteOutbox(tx, step, taken);
    wake(tx, step, heads);
    Map<PartitionKey, List<StoredEvent>> appended = returnEvents ? new HashMap<>() : Map.of();
    if (returnEvents) {
      for (int i = 0; i < taken.size(); i++) {
        appended
            .computeIfAbsent(plan.partition(i), k -> new ArrayList<>())
            .add(event(taken.get(i).row()).withSequence(plan.sequence(i)));
      }
    }
    return new SequencedBatch(true, taken.size(), heads, appended);
  }
}
