package io.boxline.chaos;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.TreeMap;
import javax.sql.DataSource;

/** Cheap questions the parent asks the database while the run goes on (no per-event scans). */
final class ChaosProbe {
  private final DataSource pool;
  private final String schema;
  private final String partition;

  ChaosProbe(DataSource pool, ChaosDatabase db) {
    this.pool = pool;
    this.schema = db.schema();
    this.partition = db.partitionColumn();
  }

  /** Events sequenced so far, all topics (the tasks topic included). */
  long sequenced() throws SQLException {
    return single("SELECT coalesce(sum(last_seq), 0) FROM " + schema + ".partition");
  }

  long outbox() throws SQLException {
    return single("SELECT count(*) FROM " + schema + ".outbox");
  }

  /** Events parked for a retry or waiting behind one (not dead letters). */
  long parkedLive() throws SQLException {
    return single("SELECT count(*) FROM " + schema + ".parked WHERE state <> 'DEAD'");
  }

  /** Per subscription: the sum of its cursor positions (events it has moved past). */
  Map<String, Long> positions() throws SQLException {
    return perSubscription("sum(coalesce(c.position, 0))");
  }

  /** Per subscription: events sequenced but not yet passed by its cursors. */
  Map<String, Long> backlogs() throws SQLException {
    return perSubscription("sum(p.last_seq - coalesce(c.position, 0))");
  }

  private Map<String, Long> perSubscription(String aggregate) throws SQLException {
    String sql =
        "SELECT s.name, "
            + aggregate
            + " FROM "
            + schema
            + ".subscription s JOIN "
            + schema
            + ".subscription_topic st ON st.subscription_id = s.id JOIN "
            + schema
            + ".partition p ON p.topic_id = st.topic_id LEFT JOIN "
            + schema
            + ".cursor c ON c.subscription_id = s.id AND c.topic_id = p.topic_id"
            + " AND c."
            + partition
            + " = p."
            + partition
            + " GROUP BY s.name";
    Map<String, Long> out = new TreeMap<>();
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.put(rs.getString(1), rs.getLong(2));
      }
    }
    return out;
  }

  private long single(String sql) throws SQLException {
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
