package io.boxline.jdbc.internal;

import io.boxline.spi.Park;
import io.boxline.spi.PartitionKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * PostgreSQL: {@code timestamptz} and {@code uuid} columns, lists of rows as arrays read with
 * {@code unnest} (a batch of any size is one round trip), wake-ups by NOTIFY.
 */
final class PostgresDialect implements SqlDialect {
  private final String logChannel;

  /**
   * @param logChannel the NOTIFY channel on which consumers learn that logs grew
   */
  PostgresDialect(String logChannel) {
    this.logChannel = logChannel;
  }

  @Override
  public String folder() {
    return "postgresql";
  }

  @Override
  public Instant instant(ResultSet rs, int column) throws SQLException {
    return JdbcSql.instant(rs.getTimestamp(column));
  }

  @Override
  public void bindInstant(PreparedStatement ps, int at, Instant t) throws SQLException {
    ps.setTimestamp(at, t == null ? null : Timestamp.from(t));
  }

  @Override
  public UUID uuid(ResultSet rs, int column) throws SQLException {
    return rs.getObject(column, UUID.class);
  }

  @Override
  public void bindUuid(PreparedStatement ps, int at, UUID id) throws SQLException {
    ps.setObject(at, id);
  }

  @Override
  public void bindDuration(PreparedStatement ps, int at, Duration age) throws SQLException {
    ps.setDouble(at, age.toMillis() / 1000.0);
  }

  /** The insert's {@code RETURNING id} yields no row when the row existed. */
  @Override
  public Long insertReturningId(Connection c, String sql, JdbcSql.Binder binder)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : null;
      }
    }
  }

  @Override
  public boolean retryable(SQLException e) {
    return JdbcSql.isDeadlock(e);
  }

  @Override
  public void insertParks(
      Connection tx, String parkSql, long subscriptionId, PartitionKey partition, List<Park> parks)
      throws SQLException {
    int n = parks.size();
    Long[] seqs = new Long[n];
    UUID[] ids = new UUID[n];
    String[] keys = new String[n];
    String[] types = new String[n];
    String[] states = new String[n];
    Integer[] attempts = new Integer[n];
    Timestamp[] next = new Timestamp[n];
    String[] errors = new String[n];
    for (int i = 0; i < n; i++) {
      Park k = parks.get(i);
      seqs[i] = k.seq();
      ids[i] = k.eventId();
      keys[i] = k.key();
      types[i] = k.type();
      states[i] = k.state().name();
      attempts[i] = k.attempts();
      next[i] = Timestamp.from(k.nextAttemptAt());
      errors[i] = k.lastError();
    }
    try (PreparedStatement ps = tx.prepareStatement(parkSql)) {
      ps.setLong(1, subscriptionId);
      ps.setLong(2, partition.topicId());
      ps.setInt(3, partition.partition());
      ps.setArray(4, tx.createArrayOf("bigint", seqs));
      ps.setArray(5, tx.createArrayOf("uuid", ids));
      ps.setArray(6, tx.createArrayOf("text", keys));
      ps.setArray(7, tx.createArrayOf("text", types));
      ps.setArray(8, tx.createArrayOf("text", states));
      ps.setArray(9, tx.createArrayOf("integer", attempts));
      ps.setArray(10, tx.createArrayOf("timestamptz", next));
      ps.setArray(11, tx.createArrayOf("text", errors));
      ps.executeUpdate();
    }
  }

  /** One compare-and-set statement for all of them ({@code INSERT ... ON CONFLICT DO UPDATE}). */
  @Override
  public Map<PartitionKey, Long> takeLeases(
      Connection c, JdbcSql db, String group, String member, List<PartitionKey> sorted)
      throws SQLException {
    Map<PartitionKey, Long> epochs = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(db.sql("acquire_leases"))) {
      ps.setString(1, group);
      ps.setString(2, member);
      bindPartitions(ps, 3, c, sorted);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          epochs.put(PartitionKey.of(rs.getLong(1), rs.getInt(2)), rs.getLong(3));
        }
      }
    }
    return epochs;
  }

  @Override
  public int forceRelease(Connection c, JdbcSql db, String group, List<PartitionKey> sorted)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("force_release"))) {
      bindPartitions(ps, 1, c, sorted);
      ps.setString(3, group);
      return ps.executeUpdate();
    }
  }

  @Override
  public void bindMembers(PreparedStatement ps, int at, Connection c, Set<String> members)
      throws SQLException {
    ps.setArray(at, c.createArrayOf("text", members.toArray()));
  }

  /** Partitions as two arrays (topics, partitions) at {@code at} and {@code at + 1}. */
  private static void bindPartitions(
      PreparedStatement ps, int at, Connection c, List<PartitionKey> partitions)
      throws SQLException {
    ps.setArray(
        at, c.createArrayOf("bigint", partitions.stream().map(PartitionKey::topicId).toArray()));
    ps.setArray(
        at + 1,
        c.createArrayOf("integer", partitions.stream().map(PartitionKey::partition).toArray()));
  }

  @Override
  public void wakeAll(Connection tx, JdbcSql db) throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement(db.sql("notify"))) {
      ps.setString(1, logChannel);
      ps.setString(2, "*");
      ps.execute();
    }
  }
}
