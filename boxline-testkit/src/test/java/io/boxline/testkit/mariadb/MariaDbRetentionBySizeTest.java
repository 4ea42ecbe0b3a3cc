package io.boxline.testkit.mariadb;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.RetentionBySizeBehaviour;

/** The retention-by-size suite on MariaDB. */
class MariaDbRetentionBySizeTest extends RetentionBySizeBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
  }
}
