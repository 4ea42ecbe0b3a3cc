package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.FailureBehaviour;

/** The failure suite on an in-memory H2 database. */
class H2FailureTest extends FailureBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
