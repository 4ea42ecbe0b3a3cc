package io.boxline.testkit.mariadb;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.TransactionRunnerBehaviour;

/** A transactional handler in a framework's transactions, on MariaDb. */
class MariaDbTransactionRunnerTest extends TransactionRunnerBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
  }
}
