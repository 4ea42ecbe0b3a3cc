package io.boxline.testkit.memory;

import io.boxline.internal.memory.InMemoryStore;
import io.boxline.spi.Store;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.StoreFencingContractBehaviour;
import java.time.Clock;

/**
 * The fencing contract on the in-memory store: no database, a fresh store per test, and as the
 * second process another store on the same data.
 */
class InMemoryStoreFencingContractTest extends StoreFencingContractBehaviour {
  private InMemoryStore memory;

  /** No database: the store holds everything itself. */
  @Override
  protected TestDatabase newDatabase(String hint) {
    return null;
  }

  @Override
  protected Store newStore() {
    memory = InMemoryStore.create(Clock.systemUTC());
    return memory;
  }

  @Override
  protected Store anotherStore() {
    return memory.sameDatabase();
  }
}
