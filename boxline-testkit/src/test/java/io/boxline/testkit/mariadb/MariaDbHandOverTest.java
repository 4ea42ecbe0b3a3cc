package io.boxline.testkit.mariadb;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.HandOverBehaviour;

/** The hand-over suite: the sequencer's events reach this process's consumers from memory. */
class MariaDbHandOverTest extends HandOverBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
  }
}
