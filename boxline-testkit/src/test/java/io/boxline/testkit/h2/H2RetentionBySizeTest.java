package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.RetentionBySizeBehaviour;

/** The retention-by-size suite on an in-memory H2 database. */
class H2RetentionBySizeTest extends RetentionBySizeBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
