package io.boxline.testkit.h2;

import io.boxline.jdbc.JdbcStore;
import io.boxline.spi.CoordinationStore;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.ConsumerGroupBehaviour;

/** Consumer groups coordinated in H2 itself (the default), log and cursors in H2. */
class H2ConsumerGroupTest extends ConsumerGroupBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint, 24);
  }

  @Override
  protected CoordinationStore newCoordination(TestDatabase db) {
    return JdbcStore.builder(db.dataSource()).schema(db.schema()).build().coordination();
  }
}
