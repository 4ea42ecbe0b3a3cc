package io.boxline.testkit.badinput;

import io.boxline.testkit.TestDatabase;

/** {@link ApiBadInputProperties} on H2. */
class H2ApiBadInputProperties extends ApiBadInputProperties {
  @Override
  TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
