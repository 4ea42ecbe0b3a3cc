package io.boxline.testkit.postgres;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.RemoteConsumersBehaviour;

/** Members that fetch and settle through an API, on PostgreSQL. */
class PostgresRemoteConsumersTest extends RemoteConsumersBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }
}
