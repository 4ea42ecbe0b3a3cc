package io.boxline.testkit.badinput;

import io.boxline.testkit.TestDatabase;

/** {@link ApiBadInputProperties} on MariaDB. */
class MariaDbApiBadInputProperties extends ApiBadInputProperties {
  @Override
  TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
  }
}
