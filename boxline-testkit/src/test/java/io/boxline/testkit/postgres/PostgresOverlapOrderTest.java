package io.boxline.testkit.postgres;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.OverlapOrderBehaviour;

class PostgresOverlapOrderTest extends OverlapOrderBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }
}
