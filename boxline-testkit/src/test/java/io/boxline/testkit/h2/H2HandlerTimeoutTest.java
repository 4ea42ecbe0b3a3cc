package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.HandlerTimeoutBehaviour;

/** Hung handlers on H2. */
class H2HandlerTimeoutTest extends HandlerTimeoutBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
