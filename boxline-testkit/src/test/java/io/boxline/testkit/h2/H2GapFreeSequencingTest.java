package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.GapFreeSequencingBehaviour;

/** The gap-free sequencing suite on an in-memory H2 database. */
class H2GapFreeSequencingTest extends GapFreeSequencingBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
