package io.boxline.testkit.postgres;

import static io.boxline.testkit.suite.SuiteSupport.raw;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.EventTypes;
import io.boxline.Sequencing;
import io.boxline.TopicName;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.InTransactionBehaviour;
import io.boxline.testkit.suite.SuiteSupport;
import java.sql.Connection;
import org.junit.jupiter.api.Test;

class PostgresInTransactionTest extends InTransactionBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }

  /**
   * A transaction above Read Committed whose snapshot predates another's move of the partition head
   * fails with a serialization failure (40001), which PostgreSQL tells apart from a deadlock: the
   * error says so and how to avoid it, not that partitions were locked in different orders.
   */
  @Test
  void aSerializationFailureIsNotReportedAsADeadlock() throws Exception {
    Boxline boxline = db.boxline(EventTypes.empty());
    TopicName t = SuiteSupport.topic(boxline, "acme/serial/events", 1, Sequencing.IN_TRANSACTION);
    var publisher = boxline.publisher();
    try (Connection late = db.dataSource().getConnection();
        Connection first = db.dataSource().getConnection()) {
      late.setAutoCommit(false);
      late.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      try (var st = late.createStatement()) {
        st.execute("SELECT 1"); // its snapshot starts here
      }
      first.setAutoCommit(false);
      publisher.publish(first, raw(t, "k", "first"));
      first.commit();
      assertThatThrownBy(() -> publisher.publish(late, raw(t, "k", "late")))
          .isInstanceOf(io.boxline.StoreException.class)
          .hasMessageContaining("above Read Committed")
          .hasMessageContaining("Read Committed")
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("deadlocked"));
      late.rollback();
    }
  }
}
