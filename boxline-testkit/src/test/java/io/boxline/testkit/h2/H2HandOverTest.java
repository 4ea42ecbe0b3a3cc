package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.HandOverBehaviour;

/** The hand-over suite: the sequencer's events reach this process's consumers from memory. */
class H2HandOverTest extends HandOverBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
