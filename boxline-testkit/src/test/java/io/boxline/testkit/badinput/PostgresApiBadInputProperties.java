package io.boxline.testkit.badinput;

import io.boxline.testkit.TestDatabase;

/** {@link ApiBadInputProperties} on PostgreSQL. */
class PostgresApiBadInputProperties extends ApiBadInputProperties {
  @Override
  TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }
}
