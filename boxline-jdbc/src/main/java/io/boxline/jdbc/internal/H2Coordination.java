package io.boxline.jdbc.internal;

import io.boxline.spi.PartitionKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Coordination on H2: lease rows are created, locked and taken one statement per key, in order. */
final class H2Coordination extends SqlCoordination {
  H2Coordination(JdbcSql db, String database) {
    super(db, database);
  }

  @Override
  boolean retryable(SQLException e) {
    return H2Sql.retryable(e);
  }

  @Override
  void createLeases(Connection c, String group, List<PartitionKey> sorted) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("create_lease"))) {
      for (PartitionKey k : sorted) {
        H2Sql.bindLease(ps, 1, group, k);
        H2Sql.insertIgnore(ps);
      }
    }
  }

  @Override
  Map<PartitionKey, Long> lockAndTake(
      Connection c, String group, String member, List<PartitionKey> sorted) throws SQLException {
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
  void bindMembers(PreparedStatement ps, int at, Set<String> members) throws SQLException {
    ps.setObject(at, H2Sql.strings(members));
  }

  @Override
  int forceRelease(Connection c, String group, List<PartitionKey> sorted) throws SQLException {
    int n = 0;
    try (PreparedStatement ps = c.prepareStatement(db.sql("force_release"))) {
      for (PartitionKey k : sorted) {
        H2Sql.bindLease(ps, 1, group, k);
        n += ps.executeUpdate();
      }
    }
    return n;
  }
}
