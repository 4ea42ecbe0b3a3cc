package io.boxline.testkit.memory;

import io.boxline.internal.memory.InMemoryStore;
import io.boxline.spi.Store;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.StoreContractBehaviour;
import java.time.Clock;

/** The store contract on the in-memory store: no database, a fresh store per test. */
class InMemoryStoreContractTest extends StoreContractBehaviour {
  /** No database: the store holds everything itself. */
  @Override
  protected TestDatabase newDatabase(String hint) {
    return null;
  }

  @Override
  protected Store newStore() {
    return InMemoryStore.create(Clock.systemUTC());
  }
}
