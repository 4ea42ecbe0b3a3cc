package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.PublishingBehaviour;

/** The publishing suite on an in-memory H2 database. */
class H2PublishingTest extends PublishingBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
