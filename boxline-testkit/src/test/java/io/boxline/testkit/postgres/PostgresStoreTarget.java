package io.boxline.testkit.postgres;

import io.boxline.spi.Store;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.store.StoreTarget;
import java.time.Duration;

/**
 * The store contract's target on PostgreSQL: a schema per test, with a store that vacuums the
 * outbox after every batch, so that its stats have something to count (and no long-transaction
 * warnings, which other sessions on the shared server could cause).
 */
final class PostgresStoreTarget implements StoreTarget {
  @Override
  public TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }

  @Override
  public Store newStore(TestDatabase db) {
    return db.store(b -> b.outboxVacuumEvery(1).longTransactionWarning(Duration.ZERO));
  }

  @Override
  public boolean countsOutboxVacuums() {
    return true;
  }
}
