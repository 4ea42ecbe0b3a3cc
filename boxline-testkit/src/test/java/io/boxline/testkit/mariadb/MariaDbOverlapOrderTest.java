package io.boxline.testkit.mariadb;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.OverlapOrderBehaviour;

class MariaDbOverlapOrderTest extends OverlapOrderBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
  }
}
