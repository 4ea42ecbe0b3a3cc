package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.RetryBehaviour;

/** The retry suite on an H2 file database (a temporary directory per test). */
class H2FileRetryTest extends RetryBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2File(hint);
  }
}
