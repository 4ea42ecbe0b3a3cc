package io.boxline.jdbc.internal;

import io.boxline.TopicName;
import io.boxline.spi.Park;
import io.boxline.spi.PartitionKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * The MariaDB / MySQL side of what subscriptions set aside or remember (see {@link SqlParking}):
 * inbox keys are stored with their SHA-256, the primary key (so keys of any length fit), and lists
 * of rows travel as JSON arrays or multi-row inserts.
 */
final class MariaDbParking extends SqlParking {
  MariaDbParking(JdbcSql db, ToLongFunction<TopicName> topicIds) {
    super(db, topicIds);
  }

  @Override
  public boolean inboxClaim(Connection tx, long subscriptionId, String key) {
    try (PreparedStatement ps = tx.prepareStatement(sql("inbox_claim"))) {
      ps.setLong(1, subscriptionId);
      ps.setString(2, MariaDbSql.sha256(key));
      ps.setString(3, key);
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw fail("inbox_claim", e);
    }
  }

  @Override
  String inboxLookupKey(String key) {
    return MariaDbSql.sha256(key);
  }

  @Override
  long deletePurged(PreparedStatement delete, List<long[]> rows) throws SQLException {
    delete.setString(1, MariaDbSql.jsonRows(rows));
    return delete.executeUpdate();
  }

  @Override
  public void insertParks(
      Connection tx, long subscriptionId, PartitionKey partition, List<Park> parks)
      throws SQLException {
    for (int from = 0; from < parks.size(); from += MariaDbSql.MAX_ROWS) {
      List<Park> chunk = parks.subList(from, Math.min(parks.size(), from + MariaDbSql.MAX_ROWS));
      try (PreparedStatement ps =
          tx.prepareStatement(MariaDbSql.repeatRows(sql("park"), chunk.size()))) {
        int i = 1;
        for (Park k : chunk) {
          i = bindPark(ps, i, subscriptionId, partition, k);
        }
        ps.executeUpdate();
      }
    }
  }
}
