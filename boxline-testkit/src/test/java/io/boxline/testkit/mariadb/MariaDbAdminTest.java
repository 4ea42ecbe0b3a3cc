package io.boxline.testkit.mariadb;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.AdminBehaviour;

/** The operator suite (listings, log reads, failure counts, deletion) on MariaDB. */
class MariaDbAdminTest extends AdminBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
  }
}
