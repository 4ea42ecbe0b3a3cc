package io.boxline.testkit.postgres;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.RetentionPolicy;
import io.boxline.ValidationException;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.RetentionBySizeBehaviour;
import org.junit.jupiter.api.Test;

/** The retention-by-size suite on PostgreSQL, and the policy's own validation. */
class PostgresRetentionBySizeTest extends RetentionBySizeBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }

  @Test
  void aSizeBelowOneIsRefused() {
    assertThatThrownBy(() -> RetentionPolicy.bySize(0))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("at least 1");
  }
}
