package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.TaskWorkerBehaviour;

/** The task worker suite on an in-memory H2 database. */
class H2TaskWorkerTest extends TaskWorkerBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
