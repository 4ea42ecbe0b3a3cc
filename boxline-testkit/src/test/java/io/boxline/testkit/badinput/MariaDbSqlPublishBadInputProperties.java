package io.boxline.testkit.badinput;

import io.boxline.testkit.TestDatabase;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Types;
import java.util.UUID;

/** {@link SqlPublishBadInputProperties} on MariaDB's {@code publish} procedure. */
class MariaDbSqlPublishBadInputProperties extends SqlPublishBadInputProperties {
  @Override
  TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
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
    try (CallableStatement cs =
        c.prepareCall("{CALL " + db.schema() + ".publish(?, ?, ?, ?, ?, ?, ?, ?)}")) {
      cs.setString(1, topic);
      cs.setString(2, type);
      cs.setString(3, payload);
      cs.setString(4, key);
      cs.setString(5, headers);
      cs.setString(6, idempotencyKey);
      cs.setString(7, source);
      cs.registerOutParameter(8, Types.CHAR);
      cs.execute();
      return UUID.fromString(cs.getString(8));
    }
  }

  /** MariaDB refuses text longer than the procedure's parameter itself, naming the parameter. */
  @Override
  boolean databaseRefusal(SQLException e) {
    return e.getMessage().matches("(?s).*Data too long for column 'p_\\w+'.*");
  }
}
