package io.boxline.testkit.memory;

import io.boxline.internal.memory.InMemoryStore;
import io.boxline.spi.Store;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.store.StoreTarget;
import java.time.Clock;

/**
 * The store contract's target in memory: no database, a fresh store per test, and as the second
 * process another store on the same data.
 */
final class InMemoryStoreTarget implements StoreTarget {
  /** No database: the store holds everything itself. */
  @Override
  public TestDatabase newDatabase(String hint) {
    return null;
  }

  @Override
  public Store newStore(TestDatabase db) {
    return InMemoryStore.create(Clock.systemUTC());
  }

  @Override
  public Store anotherStore(TestDatabase db, Store store) {
    return ((InMemoryStore) store).sameDatabase();
  }
}
