package io.boxline.testkit.postgres;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.ClaimsBehaviour;

/**
 * Proofs of documented claims (per-type retries, codecs, otherwise, partitioner, clock, migrate,
 * worker errors, inbox).
 */
class PostgresClaimsTest extends ClaimsBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }
}
