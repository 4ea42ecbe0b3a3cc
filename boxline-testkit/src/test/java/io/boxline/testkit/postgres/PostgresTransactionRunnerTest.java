package io.boxline.testkit.postgres;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.TransactionRunnerBehaviour;

/** A transactional handler in a framework's transactions, on PostgreSQL. */
class PostgresTransactionRunnerTest extends TransactionRunnerBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }
}
