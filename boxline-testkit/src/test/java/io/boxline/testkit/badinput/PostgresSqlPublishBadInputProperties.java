package io.boxline.testkit.badinput;

import io.boxline.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;

/** {@link SqlPublishBadInputProperties} on PostgreSQL's {@code publish} function. */
class PostgresSqlPublishBadInputProperties extends SqlPublishBadInputProperties {
  @Override
  TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }

  @Override
  UUID publish(
      Connection c,
      String topic,
      String type,
      String payload,
      String key,
      String headers,
      String idempotencyKey,
      String source)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT " + db.schema() + ".publish(?, ?, ?::jsonb, ?, ?::jsonb, ?, ?)")) {
      ps.setString(1, topic);
      ps.setString(2, type);
      ps.setString(3, payload);
      ps.setString(4, key);
      ps.setString(5, headers);
      ps.setString(6, idempotencyKey);
      ps.setString(7, source);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return (UUID) rs.getObject(1);
      }
    }
  }

  /** PostgreSQL refuses a NUL in text, \u0000 in jsonb, and text that is not JSON, itself. */
  @Override
  boolean databaseRefusal(SQLException e) {
    String m = e.getMessage();
    return m.contains("invalid byte sequence for encoding \"UTF8\": 0x00")
        || m.contains("unsupported Unicode escape sequence")
        || m.contains("invalid input syntax for type json");
  }
}
