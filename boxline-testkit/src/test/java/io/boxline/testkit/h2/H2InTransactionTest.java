package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.InTransactionBehaviour;

/** The in-transaction suite on an in-memory H2 database. */
class H2InTransactionTest extends InTransactionBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
