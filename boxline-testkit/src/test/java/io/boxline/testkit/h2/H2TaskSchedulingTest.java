package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.TaskSchedulingBehaviour;

/** The task scheduling suite on an in-memory H2 database. */
class H2TaskSchedulingTest extends TaskSchedulingBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
