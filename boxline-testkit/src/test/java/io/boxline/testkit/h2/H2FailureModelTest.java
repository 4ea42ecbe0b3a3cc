package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.FailureModelBehaviour;

class H2FailureModelTest extends FailureModelBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
