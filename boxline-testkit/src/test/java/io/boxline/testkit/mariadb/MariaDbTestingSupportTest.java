package io.boxline.testkit.mariadb;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.TestingSupportBehaviour;

/** BoxlineTesting on MariaDB. */
class MariaDbTestingSupportTest extends TestingSupportBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
  }
}
