package io.boxline.testkit.mariadb;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.store.StoreTarget;

/** The store contract's target on MariaDB: a database per test, the default store on it. */
final class MariaDbStoreTarget implements StoreTarget {
  @Override
  public TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
  }
}
