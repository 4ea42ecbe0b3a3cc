package io.boxline.testkit.suite;

import io.boxline.Boxline;
import io.boxline.RetryPolicy;
import io.boxline.testkit.TestDatabase;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * What the failure suites ({@link RetryBehaviour}, {@link DeadLetterBehaviour}) share: a fresh
 * database and a started Boxline per test, quick retries, and counts of a test table's rows. A
 * dialect's test class says how to get a database.
 */
public abstract class FailureFixture {

  /** Quick retries so the tests run in seconds. */
  protected static final RetryPolicy QUICK =
      RetryPolicy.exponential(Duration.ofMillis(20), Duration.ofMillis(100))
          .inPlaceAttempts(2)
          .maxAttempts(4)
          .jitter(0);

  protected TestDatabase db;
  protected Boxline boxline;

  protected abstract TestDatabase newDatabase(String hint);

  @BeforeEach
  void open(TestInfo info) {
    db = newDatabase(info.getTestMethod().map(m -> m.getName()).orElse("f"));
    boxline = db.boxline(b -> b);
  }

  @AfterEach
  void close() {
    db.close();
  }

  long count(String table) {
    return single("SELECT count(*) FROM " + table);
  }

  long countDistinct(String table) {
    return single("SELECT count(DISTINCT event_id) FROM " + table);
  }

  long single(String sql) {
    try (java.sql.Connection c = db.dataSource().getConnection();
        java.sql.Statement st = c.createStatement();
        java.sql.ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
