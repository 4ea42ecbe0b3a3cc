package io.boxline.testkit.properties;

import io.boxline.testkit.TestDatabase;

/** {@link BadInputProperties} on H2. */
class H2BadInputProperties extends BadInputProperties {
  @Override
  TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
