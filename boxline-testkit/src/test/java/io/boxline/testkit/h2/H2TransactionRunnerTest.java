package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.TransactionRunnerBehaviour;

/** A transactional handler in a framework's transactions, on H2. */
class H2TransactionRunnerTest extends TransactionRunnerBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
