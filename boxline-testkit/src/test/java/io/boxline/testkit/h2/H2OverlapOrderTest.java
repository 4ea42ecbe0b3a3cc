package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.OverlapOrderBehaviour;

class H2OverlapOrderTest extends OverlapOrderBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
