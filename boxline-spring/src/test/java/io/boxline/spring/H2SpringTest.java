package io.boxline.spring;

import io.boxline.testkit.TestDatabase;

class H2SpringTest extends SpringBehaviour {
  @Override
  TestDatabase createDatabase() {
    return TestDatabase.createH2("spring");
  }
}
