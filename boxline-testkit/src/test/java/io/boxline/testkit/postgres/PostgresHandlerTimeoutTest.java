package io.boxline.testkit.postgres;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.HandlerTimeoutBehaviour;

/** Hung handlers on PostgreSQL. */
class PostgresHandlerTimeoutTest extends HandlerTimeoutBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }
}
