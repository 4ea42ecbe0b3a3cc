package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.AdminBehaviour;

/** The operator suite (listings, log reads, failure counts, deletion) on H2. */
class H2AdminTest extends AdminBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
