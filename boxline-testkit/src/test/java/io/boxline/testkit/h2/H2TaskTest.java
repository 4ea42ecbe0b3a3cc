package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.TaskBehaviour;

/** The task suite on an in-memory H2 database. */
class H2TaskTest extends TaskBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
