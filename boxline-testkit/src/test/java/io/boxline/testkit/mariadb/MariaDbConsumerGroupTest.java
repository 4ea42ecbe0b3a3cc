package io.boxline.testkit.mariadb;

import io.boxline.jdbc.JdbcStore;
import io.boxline.spi.CoordinationStore;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.ConsumerGroupBehaviour;

/** Consumer groups coordinated in MariaDB itself (the default), log and cursors in MariaDB. */
class MariaDbConsumerGroupTest extends ConsumerGroupBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint, 24);
  }

  @Override
  protected CoordinationStore newCoordination(TestDatabase db) {
    return JdbcStore.builder(db.dataSource()).schema(db.schema()).build().coordination();
  }
}
