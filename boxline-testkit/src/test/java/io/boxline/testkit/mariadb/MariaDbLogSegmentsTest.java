package io.boxline.testkit.mariadb;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.LogSegmentsBehaviour;

class MariaDbLogSegmentsTest extends LogSegmentsBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
  }

  @Override
  protected long partitionsOfTheLog() {
    return count(
        "SELECT count(*) FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = '"
            + db.schema()
            + "' AND TABLE_NAME = 'log'");
  }
}
