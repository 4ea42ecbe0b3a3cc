package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.DeadLetterBehaviour;

/** The dead-letter suite on an in-memory H2 database. */
class H2DeadLetterTest extends DeadLetterBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
