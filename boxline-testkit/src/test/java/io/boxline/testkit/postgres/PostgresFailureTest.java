package io.boxline.testkit.postgres;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.FailureBehaviour;

class PostgresFailureTest extends FailureBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }
}
