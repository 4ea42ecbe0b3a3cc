package io.boxline.testkit.h2;

import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.ClaimsBehaviour;

/**
 * Proofs of documented claims (per-type retries, codecs, otherwise, partitioner, clock, migrate,
 * worker errors, inbox).
 */
class H2ClaimsTest extends ClaimsBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.createH2(hint);
  }
}
