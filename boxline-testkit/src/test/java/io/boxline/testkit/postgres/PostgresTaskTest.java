package io.boxline.testkit.postgres;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.TaskBehaviour;

class PostgresTaskTest extends TaskBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }
}
