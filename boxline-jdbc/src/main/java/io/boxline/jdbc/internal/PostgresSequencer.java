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
 * rows need no placement from Java, else in steps in one transaction (take the rows, advance their
 * partitions, append them, notify). Its decisions come from {@link SequencePlan}.
 */
final class PostgresSequencer {
  private final JdbcSql db;
  private final String logChannel;

  PostgresSequencer(JdbcSql db, String logChannel) {
    this.db = db;
    this.logChannel = logChannel;
  }

  private String sql(String name) {
    return db.sql(name);
  }

  private io.boxline.StoreException fail(String name, SQLException e) {
    return db.fail(name, e);
  }

  private Connection connect() throws SQLException {
    return db.connect();
  }

  /** A batch of up to {@code maxEvents} rows; see {@link io.boxline.spi.SequencerStore}. */
  SequencedBatch sequence(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner, boolean returnEvents) {
    SequencedBatch batch =
        sequenceInOneStatement(owner, ttl, maxEvents, returnEvents, assigner.kafkaCompatible());
    return batch != null ? batch : sequenceInSteps(owner, ttl, maxEvents, assigner);
  }

  /** One outbox row taken by the sequencer. */
  private record Taken(
      long outboxId,
      UUID eventId,
      long topicId,
      int partition,
      String key,
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
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql("sequence_batch"))) {
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
      throw fail("sequence_batch", e);
    }
  }

  private static List<PartitionHead> heads(String list) {
    List<PartitionHead> heads = PostgresListener.decodeHeads(list);
    return heads == null ? List.of() : heads;
  }

  private SequencedBatch sequenceInSteps(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner) {
    Step step = new Step("lock_sequencer");
    try (Connection c = db.connect()) {
      return JdbcSql.inTransaction(c, tx -> sequence(tx, step, owner, ttl, maxEvents, assigner));
    } catch (SQLException e) {
      throw fail(step.name(), e);
    }
  }

  private SequencedBatch sequence(
      Connection c,
      Step step,
      String owner,
      Duration ttl,
      int maxEvents,
      PartitionAssigner assigner)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql("lock_sequencer"))) {
      ps.setDouble(1, ttl.toMillis() / 1000.0);
      ps.setString(2, owner);
      ps.setString(3, Long.toString(ttl.toMillis()));
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return SequencedBatch.NOT_LEADER;
        }
      }
    }
    step.at("take_outbox");
    List<Taken> taken = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql("take_outbox"))) {
      ps.setInt(1, maxEvents);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          long topicId = rs.getLong(3);
          int partition = rs.getInt(4);
          if (rs.wasNull()) {
            partition = -1;
          }
          String key = rs.getString(5);
          taken.add(
              new Taken(
                  rs.getLong(1),
                  rs.getObject(2, UUID.class),
                  topicId,
                  partition,
                  key,
                  rs.getString(6),
                  rs.getString(7),
                  rs.getString(8),
                  rs.getBytes(9),
                  rs.getString(10),
                  rs.getTimestamp(11),
                  rs.getTimestamp(12)));
        }
      }
    }
    if (taken.isEmpty()) {
      return SequencedBatch.EMPTY;
    }
    // Outbox order is publish order; DELETE ... RETURNING does not promise any order.
    taken.sort((a, b) -> Long.compare(a.outboxId(), b.outboxId()));
    SequencePlan plan = new SequencePlan(assigner);
    for (Taken t : taken) {
      plan.add(t.topicId(), t.partition(), t.key());
    }
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
    try (PreparedStatement ps = c.prepareStatement(sql("advance_partitions"))) {
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
    List<PartitionHead> heads = plan.heads();
    step.at("append_log");
    int n = taken.size();
    EventArrays a = new EventArrays(n);
    Long[] seqs = new Long[n];
    for (int i = 0; i < n; i++) {
      Taken t = taken.get(i);
      int partition = plan.partition(i).partition();
      seqs[i] = plan.sequence(i);
      a.set(
          i,
          t.topicId(),
          partition,
          t.eventId(),
          t.key(),
          t.type(),
          t.source(),
          t.contentType(),
          t.payload(),
          t.headers(),
          t.createdAt(),
          t.deliverAt());
    }
    try (PreparedStatement ps = c.prepareStatement(sql("append_log"))) {
      ps.setArray(1, c.createArrayOf("bigint", a.topics));
      ps.setArray(2, c.createArrayOf("integer", a.partitions));
      ps.setArray(3, c.createArrayOf("bigint", seqs));
      ps.setArray(4, c.createArrayOf("uuid", a.ids));
      a.bindBody(ps, c, 5);
      ps.setArray(11, c.createArrayOf("timestamptz", a.created));
      ps.setArray(12, c.createArrayOf("timestamptz", a.deliverAt));
      ps.executeUpdate();
    }
    step.at("notify");
    try (PreparedStatement ps = c.prepareStatement(sql("notify"))) {
      ps.setString(1, logChannel);
      ps.setString(2, PostgresListener.encodeHeads(heads));
      ps.execute();
    }
    return new SequencedBatch(true, n, heads);
  }
}
