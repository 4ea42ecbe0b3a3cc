package io.boxline.testkit.postgres;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.ParallelByKeyBehaviour;

/** Parallel delivery by key on PostgreSQL. */
class PostgresParallelByKeyTest extends ParallelByKeyBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }
}
