package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.ParallelByKeyBehaviour;

/** Parallel delivery by key on H2. */
class H2ParallelByKeyTest extends ParallelByKeyBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
