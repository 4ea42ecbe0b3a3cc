package io.boxline.testkit.mariadb;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.RemoteConsumersBehaviour;

/** Members that fetch and settle through an API, on MariaDB. */
class MariaDbRemoteConsumersTest extends RemoteConsumersBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
  }
}
