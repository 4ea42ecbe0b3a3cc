package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.DeliveryBehaviour;

/** The delivery suite on an in-memory H2 database. */
class H2DeliveryTest extends DeliveryBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
