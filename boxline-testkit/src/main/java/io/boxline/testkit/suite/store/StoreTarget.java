package io.boxline.testkit.suite.store;

import io.boxline.spi.Store;
import io.boxline.testkit.TestDatabase;

/**
 * Which store the contract suites test, and on which database: what a dialect's test class gives
 * every role of the contract (see {@link StoreContract}). The defaults open a JDBC store on the
 * test's database; a store without a database returns null from {@link #newDatabase} and overrides
 * {@link #newStore} and {@link #anotherStore}.
 */
public interface StoreTarget {
  /**
   * A fresh, isolated database (schema) for one test, named after {@code hint}; null for a store
   * that holds its data itself.
   */
  TestDatabase newDatabase(String hint);

  /**
   * The store under test, migrated; {@code db} is what {@link #newDatabase} returned. A store made
   * with {@link TestDatabase#store()} is closed with the database.
   */
  default Store newStore(TestDatabase db) {
    return db.store();
  }

  /**
   * Another store on the test's data, as a second process opens it: its listener hears what the
   * test's store sends. The test closes it.
   */
  default Store anotherStore(TestDatabase db, Store store) {
    return db.store();
  }

  /** Whether the store vacuums the outbox as it sequences, and counts it in its stats. */
  default boolean countsOutboxVacuums() {
    return false;
  }
}
