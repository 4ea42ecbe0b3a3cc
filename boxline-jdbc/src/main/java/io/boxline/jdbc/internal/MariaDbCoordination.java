package io.boxline.jdbc.internal;

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
 * Coordination on MariaDB / MySQL: lists of leases travel as one JSON parameter read with {@code
 * JSON_TABLE} and {@code STRAIGHT_JOIN}, so rows are locked in list (key) order.
 */
final class MariaDbCoordination extends SqlCoordination {
  MariaDbCoordination(JdbcSql db, String database) {
    super(db, database);
  }

  @Override
  boolean checkInInOneCall() {
    return true; // V5__check_in_procedure.sql
  }

  @Override
  boolean retryable(SQLException e) {
    return MariaDbSql.retryable(e);
  }

  @Override
  void createLeases(Connection c, String group, List<PartitionKey> sorted) throws SQLException {
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
  }

  @Override
  Map<PartitionKey, Long> lockAndTake(
      Connection c, String group, String member, List<PartitionKey> sorted) throws SQLException {
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
      ps.setString(1, MariaDbSql.json(MariaDbSql.sorted(free)));
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
  void bindMembers(PreparedStatement ps, int at, Set<String> members) throws SQLException {
    ps.setString(at, MariaDbSql.jsonStrings(members));
  }

  @Override
  int forceRelease(Connection c, String group, List<PartitionKey> sorted) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("force_release"))) {
      ps.setString(1, MariaDbSql.json(sorted));
      ps.setString(2, group);
      return ps.executeUpdate();
    }
  }
}
