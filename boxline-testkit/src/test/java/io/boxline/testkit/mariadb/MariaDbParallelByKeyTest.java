package io.boxline.testkit.mariadb;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.ParallelByKeyBehaviour;

/** Parallel delivery by key on MariaDB. */
class MariaDbParallelByKeyTest extends ParallelByKeyBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
  }
}
