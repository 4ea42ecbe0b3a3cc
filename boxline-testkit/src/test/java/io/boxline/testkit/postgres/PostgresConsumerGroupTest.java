package io.boxline.testkit.postgres;

import io.boxline.jdbc.JdbcStore;
import io.boxline.spi.CoordinationStore;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.ConsumerGroupBehaviour;

/** Consumer groups coordinated in PostgreSQL itself (the default). */
class PostgresConsumerGroupTest extends ConsumerGroupBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint, 24);
  }

  @Override
  protected CoordinationStore newCoordination(TestDatabase db) {
    return JdbcStore.builder(db.dataSource()).schema(db.schema()).build().coordination();
  }
}
