package io.boxline.testkit.mariadb;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.ClaimsBehaviour;

/**
 * Proofs of documented claims (per-type retries, codecs, otherwise, partitioner, clock, migrate,
 * worker errors, inbox).
 */
class MariaDbClaimsTest extends ClaimsBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createMariaDb(hint);
  }
}
