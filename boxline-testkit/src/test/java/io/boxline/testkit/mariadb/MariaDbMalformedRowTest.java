package io.boxline.testkit.mariadb;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.MalformedRowBehaviour;

class MariaDbMalformedRowTest extends MalformedRowBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
  }
}
