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
 * The H2 side of what subscriptions set aside or remember (see {@link SqlParking}): inbox keys are
 * stored as they are, and lists of rows travel as JDBC batches of single-row statements.
 */
final class H2Parking extends SqlParking {
  H2Parking(JdbcSql db, ToLongFunction<TopicName> topicIds) {
    super(db, topicIds);
  }

  @Override
  public boolean inboxClaim(Connection tx, long subscriptionId, String key) {
    try (PreparedStatement ps = tx.prepareStatement(sql("inbox_claim"))) {
      ps.setLong(1, subscriptionId);
      ps.setString(2, key);
      return H2Sql.insertIgnore(ps) == 1;
    } catch (SQLException e) {
      throw fail("inbox_claim", e);
    }
  }

  @Override
  String inboxLookupKey(String key) {
    return key;
  }

  @Override
  long deletePurged(PreparedStatement delete, List<long[]> rows) throws SQLException {
    for (long[] r : rows) {
      delete.setLong(1, r[0]);
      delete.setInt(2, (int) r[1]);
      delete.setLong(3, r[2]);
      delete.addBatch();
    }
    long total = 0;
    for (int n : delete.executeBatch()) {
      total += Math.max(n, 0);
    }
    return total;
  }

  @Override
  public void insertParks(
      Connection tx, long subscriptionId, PartitionKey partition, List<Park> parks)
      throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement(sql("park"))) {
      for (Park k : parks) {
        bindPark(ps, 1, subscriptionId, partition, k);
        H2Sql.insertIgnore(ps);
      }
    }
  }
}
