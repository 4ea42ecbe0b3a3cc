package io.boxline.testkit.fault;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * A fault test: a fresh {@link FaultFixture} (schema, child processes) per test, closed after it.
 */
abstract class FaultTest {
  private final String hint;
  protected FaultFixture fx;

  /**
   * @param hint a short name for the test's schema and child processes
   */
  FaultTest(String hint) {
    this.hint = hint;
  }

  @BeforeEach
  void openFixture() {
    fx = FaultFixture.create(hint);
  }

  @AfterEach
  void closeFixture() {
    fx.close();
  }
}
