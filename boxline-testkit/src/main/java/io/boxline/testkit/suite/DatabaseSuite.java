package io.boxline.testkit.suite;

import io.boxline.testkit.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * A behaviour suite whose every test gets a fresh, isolated database (a schema, or an H2 database)
 * from the dialect's test class, closed and dropped after the test.
 */
public abstract class DatabaseSuite {
  protected TestDatabase db;

  /** A fresh, isolated database (schema) for one test. */
  protected abstract TestDatabase newDatabase(String hint);

  @BeforeEach
  void openDatabase(TestInfo info) {
    db = newDatabase(info.getTestMethod().map(m -> m.getName()).orElse("t"));
  }

  @AfterEach
  void closeDatabase() {
    if (db != null) {
      db.close();
    }
  }
}
