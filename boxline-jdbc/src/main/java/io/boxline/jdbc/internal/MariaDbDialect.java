package io.boxline.jdbc.internal;

import io.boxline.spi.Park;
import io.boxline.spi.PartitionKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * MariaDB / MySQL: times as epoch microseconds, event ids as text, lists as JSON arrays (read with
 * {@code JSON_TABLE}) or multi-row {@code VALUES}, inbox keys stored by their SHA-256 (so keys of
 * any length fit the primary key), wake-ups through the {@code wake_all} row that pollers watch.
 */
final class MariaDbDialect extends EpochMicrosDialect {
  @Override
  public String folder() {
    return "mariadb";
  }

  /** {@code insert_partitions} takes the partition numbers as a JSON array. */
  @Override
  public void bindPartitionNumbers(PreparedStatement ps, int at, int partitions)
      throws SQLException {
    StringBuilder numbers = new StringBuilder(partitions * 6).append('[');
    for (int i = 0; i < partitions; i++) {
      numbers.append(i == 0 ? "" : ",").append(i);
    }
    ps.setString(at, numbers.append(']').toString());
  }

  @Override
  public boolean retryable(SQLException e) {
    return MariaDbSql.retryable(e);
  }

  /** Connector/J may answer a batch with "success, count unknown" per statement. */
  @Override
  public boolean batchCountsRows() {
    return false;
  }

  @Override
  public String inboxLookupKey(String key) {
    return MariaDbSql.sha256(key);
  }

  @Override
  public boolean inboxKeepsKey() {
    return true;
  }

  @Override
  public void insertParks(
      Connection tx, String parkSql, long subscriptionId, PartitionKey partition, List<Park> parks)
      throws SQLException {
    for (int from = 0; from < parks.size(); from += MariaDbSql.MAX_ROWS) {
      List<Park> chunk = parks.subList(from, Math.min(parks.size(), from + MariaDbSql.MAX_ROWS));
      try (PreparedStatement ps =
          tx.prepareStatement(MariaDbSql.repeatRows(parkSql, chunk.size()))) {
        int i = 1;
        for (Park k : chunk) {
          i = bindParkRow(ps, i, subscriptionId, partition, k);
        }
        ps.executeUpdate();
      }
    }
  }

  @Override
  public long deleteRows(PreparedStatement delete, List<LogKey> rows) throws SQLException {
    delete.setString(
        1, MariaDbSql.jsonRows(rows, LogKey::topicId, LogKey::partition, LogKey::sequence));
    return delete.executeUpdate();
  }

  /**
   * Lease rows outlive their owners: the missing ones are created first, on their own, so that the
   * transaction that follows only ever locks existing rows, exclusively, in list (key) order.
   */
  @Override
  public Map<PartitionKey, Long> takeLeases(
      Connection c, JdbcSql db, String group, String member, List<PartitionKey> sorted)
      throws SQLException {
    for (int from = 0; from < sorted.size(); from += MariaDbSql.MAX_ROWS) {
      List<PartitionKey> chunk =
          sorted.subList(from, Math.min(sorted.size(), from + MariaDbSql.MAX_ROWS));
      try (PreparedStatement ps =
          c.prepareStatement(MariaDbSql.repeatRows(db.sql("create_leases"), chunk.size()))) {
        int i = 1;
        for (PartitionKey k : chunk) {
          ps.setString(i++, group);
          ps.setLong(i++, k.topicId());
          ps.setInt(i++, k.partition());
        }
        ps.executeUpdate();
      }
    }
    return JdbcSql.inTransaction(c, tx -> lockAndTake(tx, db, group, member, sorted));
  }

  private static Map<PartitionKey, Long> lockAndTake(
      Connection c, JdbcSql db, String group, String member, List<PartitionKey> sorted)
      throws SQLException {
    List<PartitionKey> free = new ArrayList<>();
    Map<PartitionKey, Long> epochs = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(db.sql("acquire_lock"))) {
      ps.setString(1, MariaDbSql.json(sorted));
      ps.setString(2, group);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rs.getString(3);
          if (rs.wasNull()) {
            PartitionKey k = PartitionKey.of(rs.getLong(1), rs.getInt(2));
            free.add(k);
            epochs.put(k, rs.getLong(4) + 1);
          }
        }
      }
    }
    if (free.isEmpty()) {
      return epochs;
    }
    try (PreparedStatement ps = c.prepareStatement(db.sql("acquire_take"))) {
      ps.setString(1, MariaDbSql.json(JdbcSql.sorted(free)));
      ps.setString(2, group);
      ps.setString(3, member);
      int n = ps.executeUpdate();
      if (n != free.size()) {
        throw new SQLException(
            "acquire_take changed " + n + " of " + free.size() + " locked free leases");
      }
    }
    return epochs;
  }

  @Override
  public int forceRelease(Connection c, JdbcSql db, String group, List<PartitionKey> sorted)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("force_release"))) {
      ps.setString(1, MariaDbSql.json(sorted));
      ps.setString(2, group);
      return ps.executeUpdate();
    }
  }

  @Override
  public void bindMembers(PreparedStatement ps, int at, Connection c, Set<String> members)
      throws SQLException {
    ps.setString(at, MariaDbSql.jsonStrings(members));
  }
}
