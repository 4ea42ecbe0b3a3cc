package io.boxline.testkit.postgres;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.FailureModelBehaviour;

class PostgresFailureModelTest extends FailureModelBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }
}
