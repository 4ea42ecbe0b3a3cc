package io.boxline.testkit.postgres;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.AdminBehaviour;

/** The operator suite (listings, log reads, failure counts, deletion) on PostgreSQL. */
class PostgresAdminTest extends AdminBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }
}
