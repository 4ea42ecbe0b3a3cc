package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.store.StoreTarget;

/** The store contract's target on H2: a database in memory per test, the default store on it. */
final class H2StoreTarget implements StoreTarget {
  @Override
  public TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
