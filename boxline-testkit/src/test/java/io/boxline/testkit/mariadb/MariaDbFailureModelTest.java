package io.boxline.testkit.mariadb;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.FailureModelBehaviour;

class MariaDbFailureModelTest extends FailureModelBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
  }
}
