package io.boxline.jdbc.internal;

import io.boxline.spi.Park;
import io.boxline.spi.PartitionKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * H2: times as epoch microseconds and event ids as text (as on MariaDB), lists as JDBC batches of
 * single-row statements, "insert unless present" as an insert whose duplicate-key error counts as
 * zero rows, wake-ups through the {@code wake_all} row that pollers watch.
 */
final class H2Dialect extends EpochMicrosDialect {
  @Override
  public String folder() {
    return "h2";
  }

  @Override
  public int insertUnlessPresent(PreparedStatement ps) throws SQLException {
    return H2Sql.insertIgnore(ps);
  }

  @Override
  public boolean retryable(SQLException e) {
    return H2Sql.retryable(e);
  }

  @Override
  public void insertParks(
      Connection tx, String parkSql, long subscriptionId, PartitionKey partition, List<Park> parks)
      throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement(parkSql)) {
      for (Park k : parks) {
        bindParkRow(ps, 1, subscriptionId, partition, k);
        H2Sql.insertIgnore(ps);
      }
    }
  }

  @Override
  public long deleteRows(PreparedStatement delete, List<LogKey> rows) throws SQLException {
    for (LogKey r : rows) {
      delete.setLong(1, r.topicId());
      delete.setInt(2, r.partition());
      delete.setLong(3, r.sequence());
      delete.addBatch();
    }
    long total = 0;
    for (int n : delete.executeBatch()) {
      total += Math.max(n, 0);
    }
    return total;
  }

  /**
   * Lease rows outlive their owners: the missing ones are created first, on their own, so that the
   * transaction that follows only ever locks existing rows, exclusively, one by one in key order.
   */
  @Override
  public Map<PartitionKey, Long> takeLeases(
      Connection c, JdbcSql db, String group, String member, List<PartitionKey> sorted)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("create_lease"))) {
      for (PartitionKey k : sorted) {
        H2Sql.bindLease(ps, 1, group, k);
        H2Sql.insertIgnore(ps);
      }
    }
    return JdbcSql.inTransaction(c, tx -> lockAndTake(tx, db, group, member, sorted));
  }

  private static Map<PartitionKey, Long> lockAndTake(
      Connection c, JdbcSql db, String group, String member, List<PartitionKey> sorted)
      throws SQLException {
    Map<PartitionKey, Long> epochs = new LinkedHashMap<>();
    try (PreparedStatement lock = c.prepareStatement(db.sql("acquire_lock"));
        PreparedStatement take = c.prepareStatement(db.sql("acquire_take"))) {
      for (PartitionKey k : sorted) {
        H2Sql.bindLease(lock, 1, group, k);
        long epoch;
        try (ResultSet rs = lock.executeQuery()) {
          if (!rs.next()) {
            continue;
          }
          rs.getString(1);
          if (!rs.wasNull()) {
            continue; // held by someone
          }
          epoch = rs.getLong(2) + 1;
        }
        take.setString(1, member);
        H2Sql.bindLease(take, 2, group, k);
        if (take.executeUpdate() != 1) {
          throw new SQLException("acquire_take missed a locked free lease " + k);
        }
        epochs.put(k, epoch);
      }
    }
    return epochs;
  }

  @Override
  public int forceRelease(Connection c, JdbcSql db, String group, List<PartitionKey> sorted)
      throws SQLException {
    int n = 0;
    try (PreparedStatement ps = c.prepareStatement(db.sql("force_release"))) {
      for (PartitionKey k : sorted) {
        H2Sql.bindLease(ps, 1, group, k);
        n += ps.executeUpdate();
      }
    }
    return n;
  }

  @Override
  public void bindMembers(PreparedStatement ps, int at, Connection c, Set<String> members)
      throws SQLException {
    ps.setObject(at, H2Sql.strings(members));
  }
}
