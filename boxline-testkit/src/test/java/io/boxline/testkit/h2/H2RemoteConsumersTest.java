package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.RemoteConsumersBehaviour;

/** Members that fetch and settle through an API, on H2. */
class H2RemoteConsumersTest extends RemoteConsumersBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
