package io.boxline.testkit.mariadb;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.SqlPublishBehaviour;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Types;

class MariaDbSqlPublishTest extends SqlPublishBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
  }

  @Override
  protected boolean storesNul() {
    return true;
  }

  @Override
  protected String callPublish(Connection c, String schema, Args a) throws SQLException {
    try (CallableStatement cs =
        c.prepareCall("{call " + schema + ".publish(?, ?, ?, ?, ?, ?, ?, ?)}")) {
      cs.setString(1, a.topic());
      cs.setString(2, a.type());
      cs.setString(3, a.payload());
      cs.setString(4, a.key());
      cs.setString(5, a.headers());
      cs.setString(6, a.idempotencyKey());
      cs.setString(7, a.source());
      cs.registerOutParameter(8, Types.CHAR);
      cs.execute();
      return cs.getString(8);
    }
  }
}
