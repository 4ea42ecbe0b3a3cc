package io.boxline.testkit.mariadb;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.HandlerTimeoutBehaviour;

/** Hung handlers on MariaDB. */
class MariaDbHandlerTimeoutTest extends HandlerTimeoutBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
  }
}
