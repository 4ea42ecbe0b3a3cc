package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.RetentionBehaviour;

/** The retention suite on an in-memory H2 database. */
class H2RetentionTest extends RetentionBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
