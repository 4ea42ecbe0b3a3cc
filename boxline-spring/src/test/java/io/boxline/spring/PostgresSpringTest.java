package io.boxline.spring;

import io.boxline.testkit.TestDatabase;

class PostgresSpringTest extends SpringBehaviour {
  @Override
  TestDatabase createDatabase() {
    return TestDatabase.create("spring");
  }
}
