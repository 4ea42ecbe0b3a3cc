package io.boxline.testkit.postgres;

import io.boxline.spi.Store;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.StoreFencingContractBehaviour;
import java.time.Duration;

/**
 * On PostgreSQL, with a store that vacuums the outbox after every batch, so that its stats have
 * something to count (and no long-transaction warnings, which other sessions on the shared server
 * could cause).
 */
class PostgresStoreFencingContractTest extends StoreFencingContractBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }

  @Override
  protected Store newStore() {
    return db.store(b -> b.outboxVacuumEvery(1).longTransactionWarning(Duration.ZERO));
  }

  @Override
  protected boolean countsOutboxVacuums() {
    return true;
  }
}
