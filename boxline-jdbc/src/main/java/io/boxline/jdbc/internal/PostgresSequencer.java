package io.boxline.jdbc.internal;

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
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The PostgreSQL sequencer's batch: in one auto-commit statement ({@code sequence_batch}) when the
 * rows need no placement from Java, else in the steps every dialect runs ({@link SqlSequencer}:
 * take the rows, advance their partitions, append them, notify) in one transaction. Its decisions
 * come from {@link SequencePlan}.
 */
final class PostgresSequencer extends SqlSequencer<PostgresSequencer.Row> {
  private final String logChannel;

  PostgresSequencer(JdbcSql db, String logChannel) {
    super(db);
    this.logChannel = logChannel;
  }

  /** A batch of up to {@code maxEvents} rows; see {@link io.boxline.spi.SequencerStore}. */
  SequencedBatch sequence(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner, boolean returnEvents) {
    SequencedBatch batch =
        sequenceInOneStatement(owner, ttl, maxEvents, returnEvents, assigner.kafkaCompatible());
    return batch != null ? batch : sequenceInSteps(owner, ttl, maxEvents, assigner);
  }

  /** What the steps keep of a taken outbox row besides its placement: the rest of the row. */
  record Row(
      UUID eventId,
      String type,
      String source,
      String contentType,
      byte[] payload,
      String headers,
      Timestamp createdAt,
      Timestamp deliverAt) {}

  /**
   * The common case in one round trip: the whole batch is one auto-commit statement. Returns null
   * when the oldest outbox row has no partition yet (published from SQL): the Java partitioner must
   * assign it, so that batch goes through {@link #sequenceInSteps}.
   */
  private SequencedBatch sequenceInOneStatement(
      String owner, Duration ttl, int maxEvents, boolean returnEvents, boolean placeUnassigned) {
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement(db.sql("sequence_batch"))) {
      ps.setDouble(1, ttl.toMillis() / 1000.0);
      ps.setString(2, owner);
      ps.setInt(3, maxEvents);
      ps.setString(4, logChannel);
      ps.setInt(5, PostgresListener.MAX_PAYLOAD);
      ps.setBoolean(6, returnEvents);
      ps.setBoolean(7, placeUnassigned);
      boolean leased = false;
      int taken = 0;
      boolean unassigned = false;
      String heads = null;
      Map<PartitionKey, List<StoredEvent>> appended = new HashMap<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          if (rs.getInt(1) == 0) {
            leased = rs.getBoolean(2);
            taken = rs.getInt(3);
            unassigned = rs.getBoolean(4);
            heads = rs.getString(5);
          } else {
            appended
                .computeIfAbsent(
                    PartitionKey.of(rs.getLong(8), rs.getInt(9)), k -> new ArrayList<>())
                .add(
                    Headers.storedEvent(
                        rs.getObject(11, UUID.class),
                        rs.getLong(10),
                        rs.getString(12),
                        rs.getString(13),
                        rs.getString(14),
                        rs.getString(15),
                        rs.getBytes(16),
                        rs.getString(17),
                        rs.getTimestamp(18).toInstant(),
                        JdbcSql.instant(rs.getTimestamp(19))));
          }
        }
      }
      if (!leased) {
        return SequencedBatch.NOT_LEADER;
      }
      if (taken == 0) {
        return unassigned ? null : SequencedBatch.EMPTY;
      }
      for (List<StoredEvent> run : appended.values()) {
        run.sort(Comparator.comparingLong(StoredEvent::sequence));
      }
      return new SequencedBatch(true, taken, heads(heads), appended);
    } catch (SQLException e) {
      throw db.fail("sequence_batch", e);
    }
  }

  private static List<PartitionHead> heads(String list) {
    List<PartitionHead> heads = PostgresListener.decodeHeads(list);
    return heads == null ? List.of() : heads;
  }

  /**
   * The batch in steps in one transaction ({@link SqlSequencer}): {@code take_outbox} deletes the
   * rows it takes, {@code advance_partitions} advances and reads each partition in one statement,
   * {@code append_log} writes the whole rows from arrays, and {@code notify} wakes the consumers.
   * The steps hand no events over (only {@code sequence_batch} returns them).
   */
  private SequencedBatch sequenceInSteps(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner) {
    Step step = new Step("lock_sequencer");
    try (Connection c = db.connect()) {
      return JdbcSql.inTransaction(
          c, tx -> sequenceIn(tx, step, owner, ttl, maxEvents, assigner, false));
    } catch (SQLException e) {
      throw db.fail(step.name(), e);
    }
  }

  /** The lease carries no version here: partitions keep none. */
  @Override
  Long lockSequencer(Connection c, Step step, String owner, Duration ttl) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("lock_sequencer"))) {
      ps.setDouble(1, ttl.toMillis() / 1000.0);
      ps.setString(2, owner);
      ps.setString(3, Long.toString(ttl.toMillis()));
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? 0L : null;
      }
    }
  }

  /** A row of {@code take_outbox}: its {@code DELETE ... RETURNING} the whole row. */
  @Override
  Taken<Row> taken(ResultSet rs, boolean events) throws SQLException {
    return new Taken<>(
        rs.getLong(1),
        rs.getLong(3),
        partitionOrNone(rs, 4),
        rs.getString(5),
        new Row(
            rs.getObject(2, UUID.class),
            rs.getString(6),
            rs.getString(7),
            rs.getString(8),
            rs.getBytes(9),
            rs.getString(10),
            rs.getTimestamp(11),
            rs.getTimestamp(12)));
  }

  /** One statement advances each partition by its rows and returns its new last sequence. */
  @Override
  void advancePartitions(Connection c, Step step, SequencePlan plan, long version)
      throws SQLException {
    step.at("advance_partitions");
    List<PartitionKey> touched = plan.partitions();
    int groups = touched.size();
    Long[] gTopics = new Long[groups];
    Integer[] gParts = new Integer[groups];
    Long[] gCounts = new Long[groups];
    for (int g = 0; g < groups; g++) {
      PartitionKey k = touched.get(g);
      gTopics[g] = k.topicId();
      gParts[g] = k.partition();
      gCounts[g] = (long) plan.count(k);
    }
    Map<PartitionKey, Long> lastAfter = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(db.sql("advance_partitions"))) {
      ps.setArray(1, c.createArrayOf("bigint", gTopics));
      ps.setArray(2, c.createArrayOf("integer", gParts));
      ps.setArray(3, c.createArrayOf("bigint", gCounts));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          lastAfter.put(PartitionKey.of(rs.getLong(1), rs.getInt(2)), rs.getLong(3));
        }
      }
    }
    plan.numberUpTo(lastAfter);
  }

  @Override
  int appendLog(Connection c, List<Taken<Row>> taken, SequencePlan plan) throws SQLException {
    int n = taken.size();
    EventArrays a = new EventArrays(n);
    Long[] seqs = new Long[n];
    for (int i = 0; i < n; i++) {
      Taken<Row> t = taken.get(i);
      Row r = t.row();
      seqs[i] = plan.sequence(i);
      a.set(
          i,
          t.topicId(),
          plan.partition(i).partition(),
          r.eventId(),
          t.key(),
          r.type(),
          r.source(),
          r.contentType(),
          r.payload(),
          r.headers(),
          r.createdAt(),
          r.deliverAt());
    }
    try (PreparedStatement ps = c.prepareStatement(db.sql("append_log"))) {
      ps.setArray(1, c.createArrayOf("bigint", a.topics));
      ps.setArray(2, c.createArrayOf("integer", a.partitions));
      ps.setArray(3, c.createArrayOf("bigint", seqs));
      ps.setArray(4, c.createArrayOf("uuid", a.ids));
      a.bindBody(ps, c, 5);
      ps.setArray(11, c.createArrayOf("timestamptz", a.created));
      ps.setArray(12, c.createArrayOf("timestamptz", a.deliverAt));
      return ps.executeUpdate();
    }
  }

  /** {@code take_outbox} deleted them. */
  @Override
  void deleteOutbox(Connection c, Step step, List<Taken<Row>> taken) {}

  /** NOTIFY with the new heads, delivered when the transaction commits. */
  @Override
  void wake(Connection c, Step step, List<PartitionHead> heads) throws SQLException {
    step.at("notify");
    try (PreparedStatement ps = c.prepareStatement(db.sql("notify"))) {
      ps.setString(1, logChannel);
      ps.setString(2, PostgresListener.encodeHeads(heads));
      ps.execute();
    }
  }
}
