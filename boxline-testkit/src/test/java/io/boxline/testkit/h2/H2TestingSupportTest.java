package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.TestingSupportBehaviour;

/** BoxlineTesting on H2. */
class H2TestingSupportTest extends TestingSupportBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
