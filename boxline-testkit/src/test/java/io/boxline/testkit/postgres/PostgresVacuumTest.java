package io.boxline.testkit.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.OutgoingEvent;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.SuiteSupport;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Where autovacuum is off (for the server, or for Boxline's tables), the retention loop vacuums
 * Boxline's tables itself, so the outbox's insert/delete churn does not grow it without bound.
 */
class PostgresVacuumTest {
  private TestDatabase db;

  @BeforeEach
  void open() {
    db = TestDatabase.create("vacuum");
  }

  @AfterEach
  void close() {
    db.close();
  }

  private long query(String sql) {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private void execute(String sql) {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void theRetentionLoopVacuumsTheOutboxWhenAutovacuumIsOffForIt() {
    // Migrate first, then switch autovacuum off for the outbox whatever the server's setting is.
    JdbcStore.builder(db.dataSource()).schema(db.schema()).build().migrate();
    execute("ALTER TABLE " + db.schema() + ".outbox SET (autovacuum_enabled = false)");
    // The sequencer's own outbox vacuum (next test) is off: this one is about the retention loop.
    Boxline boxline =
        db.boxline(
            store -> store.outboxVacuumEvery(0), b -> b.retentionInterval(Duration.ofMillis(300)));
    TopicName t = SuiteSupport.topic(boxline, "acme/vacuum/events", 4);
    List<Object> batch = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      batch.add(OutgoingEvent.builder(t).type("t").key("k" + i).payload(new byte[200]).build());
    }
    for (int round = 0; round < 5; round++) {
      boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, batch));
    }
    Await.until(
        Duration.ofSeconds(30),
        "the sequencer emptied the outbox",
        () -> query("SELECT count(*) FROM " + db.schema() + ".outbox") == 0);
    String stats =
        "FROM pg_stat_user_tables WHERE schemaname = '" + db.schema() + "' AND relname = 'outbox'";
    // An empty, vacuumed outbox is truncated back to (almost) nothing. Truncating needs a moment
    // when nobody touches the table, which a vacuum of a busy moment does not get: a later run of
    // the retention loop (every 300 ms here) does it.
    Await.until(
        Duration.ofSeconds(30),
        "the outbox vacuumed by Boxline, its 10,000 dead rows gone and its pages truncated",
        () ->
            query("SELECT vacuum_count " + stats) > 0
                && query("SELECT n_dead_tup " + stats) == 0
                && query("SELECT pg_relation_size('" + db.schema() + ".outbox')") < 64 * 1024);
    assertThat(query("SELECT autovacuum_count " + stats)).as("not autovacuum's work").isZero();
  }

  /**
   * The sequencer vacuums the outbox every {@code outboxVacuumEvery} events, whatever autovacuum
   * does: each batch scans the outbox's primary key from its start, past the entries of every row
   * sequenced since the last vacuum.
   */
  @Test
  void theSequencerVacuumsTheOutboxEveryFewThousandEvents() {
    JdbcStore.builder(db.dataSource()).schema(db.schema()).build().migrate();
    execute("ALTER TABLE " + db.schema() + ".outbox SET (autovacuum_enabled = false)");
    Boxline boxline =
        db.boxline(
            store -> store.outboxVacuumEvery(1_000).vacuumWhenAutovacuumOff(false),
            b -> b.retentionInterval(Duration.ofHours(1)));
    TopicName t = SuiteSupport.topic(boxline, "acme/vacuum/sequencer", 4);
    List<Object> batch = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      batch.add(OutgoingEvent.builder(t).type("t").key("k" + i).payload(new byte[200]).build());
    }
    String stats =
        "FROM pg_stat_user_tables WHERE schemaname = '" + db.schema() + "' AND relname = 'outbox'";
    // Each round sequences 1,000 events, so each earns one vacuum (it runs on a thread of its own).
    for (int round = 1; round <= 3; round++) {
      for (int tx = 0; tx < 2; tx++) {
        boxline.inTransaction(x -> boxline.publisher().publishAll(x, batch));
      }
      Await.until(
          Duration.ofSeconds(30),
          "round " + round + " sequenced",
          () -> query("SELECT count(*) FROM " + db.schema() + ".outbox") == 0);
      int expected = round;
      Await.until(
          Duration.ofSeconds(30),
          "vacuum number " + round + " of the outbox by the sequencer",
          () -> query("SELECT vacuum_count " + stats) >= expected);
      // The vacuum thread counts after its statement returns, a moment after the server does.
      Await.until(
          Duration.ofSeconds(30),
          "outbox vacuum number " + round + " counted",
          () -> boxline.stats().outboxVacuums() >= expected);
    }
    assertThat(query("SELECT autovacuum_count " + stats)).isZero();
    assertThat(boxline.stats().outboxVacuumFailures()).isZero();
  }

  /**
   * A transaction left open keeps the outbox's dead index entries alive whatever vacuums: after the
   * next outbox vacuum the store says which one it is.
   */
  @Test
  void aTransactionLeftOpenIsNamedAfterTheNextOutboxVacuum() throws Exception {
    List<String> warnings = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.logging.Logger logger =
        java.util.logging.Logger.getLogger("io.boxline.jdbc.internal.SqlStore");
    java.util.logging.Handler handler =
        new java.util.logging.Handler() {
          @Override
          public void publish(java.util.logging.LogRecord r) {
            if (r.getLevel() == java.util.logging.Level.WARNING) {
              warnings.add(new java.util.logging.SimpleFormatter().formatMessage(r));
            }
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    logger.addHandler(handler);
    Boxline boxline =
        db.boxline(
            store -> store.outboxVacuumEvery(100).longTransactionWarning(Duration.ofMillis(300)),
            b -> b);
    TopicName t = SuiteSupport.topic(boxline, "acme/vacuum/open", 2);
    List<Object> batch = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      batch.add(OutgoingEvent.builder(t).type("t").key("k" + i).payload(new byte[10]).build());
    }
    try (Connection open = db.dataSource().getConnection()) {
      open.setAutoCommit(false);
      open.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      long pid;
      try (Statement st = open.createStatement();
          ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
        rs.next();
        pid = rs.getLong(1); // the snapshot taken here is held until the transaction ends
      }
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (boxline.stats().longTransactionWarnings() == 0) {
        assertThat(System.nanoTime())
            .as("no long-transaction warning in 30 s")
            .isLessThan(deadline);
        long vacuums = boxline.stats().outboxVacuums();
        boxline.inTransaction(x -> boxline.publisher().publishAll(x, batch));
        Await.until(
            Duration.ofSeconds(30),
            "the next outbox vacuum",
            () -> boxline.stats().outboxVacuums() > vacuums);
      }
      // The counter moves before the line is logged, and other warnings (autovacuum off) may come
      // first: wait for this one.
      Await.until(
          Duration.ofSeconds(5),
          "the warning logged",
          () -> warnings.stream().anyMatch(w -> w.contains("no vacuum can clear the outbox")));
      assertThat(warnings)
          .anySatisfy(
              w ->
                  assertThat(w)
                      .contains("pid " + pid)
                      .contains("no vacuum can clear the outbox")
                      .contains("idle in transaction"));
      // At most one warning per five minutes, however many vacuums follow.
      long vacuums = boxline.stats().outboxVacuums();
      boxline.inTransaction(x -> boxline.publisher().publishAll(x, batch));
      Await.until(
          Duration.ofSeconds(30),
          "one more outbox vacuum",
          () -> boxline.stats().outboxVacuums() > vacuums);
      assertThat(boxline.stats().longTransactionWarnings()).isEqualTo(1);
      open.rollback();
    } finally {
      logger.removeHandler(handler);
    }
  }

  @Test
  void theVacuumSettingsRefuseBadValuesWithTheirRule() {
    JdbcStore.Builder b = JdbcStore.builder(db.dataSource());
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> b.longTransactionWarning(Duration.ofSeconds(-1)))
        .isInstanceOf(io.boxline.ValidationException.class)
        .hasMessage(
            "longTransactionWarning must be a positive duration, or Duration.ZERO for never; got"
                + " PT-1S");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> b.outboxVacuumEvery(-1))
        .isInstanceOf(io.boxline.ValidationException.class)
        .hasMessage("outboxVacuumEvery must be 0 (never) or a number of events, not -1");
  }
}
