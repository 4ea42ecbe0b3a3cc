package io.boxline.testkit.postgres;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.TestingSupportBehaviour;

/** BoxlineTesting on PostgreSQL. */
class PostgresTestingSupportTest extends TestingSupportBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }
}
