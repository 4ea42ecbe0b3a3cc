package io.boxline.testkit.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.NamespacePath;
import io.boxline.Partitioner;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.jdbc.JdbcStore;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** PostgreSQL-only surfaces: the SQL-level publish function, the trigger recipe, and DDL export. */
class PostgresSqlSurfaceTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void triggerPublishesBeforeAndAfterRowImagesInTheWritersTransaction() throws Exception {
    try (TestDatabase db = TestDatabase.create("trigger")) {
      Boxline boxline = db.boxline(b -> b);
      TopicName accounts = TopicName.of("acme/bank", "accounts");
      boxline.admin().createNamespace(NamespacePath.of("acme/bank"));
      boxline.admin().createTopic(accounts, 4);
      boxline.admin().createSubscription(SubscriptionSpec.of("audit", accounts));
      List<Event> seen = new CopyOnWriteArrayList<>();
      boxline.consumer("audit").handler(seen::add).start();
      String s = db.schema();
      try (Connection c = db.dataSource().getConnection();
          Statement st = c.createStatement()) {
        // The recipe from docs/sql-publish.md.
        st.execute(
            "CREATE TABLE " + s + ".account (id bigint PRIMARY KEY, owner text, balance numeric)");
        st.execute(
            "CREATE FUNCTION "
                + s
                + ".account_changed() RETURNS trigger LANGUAGE plpgsql AS $$\n"
                + "BEGIN\n"
                + "  PERFORM "
                + s
                + ".publish(\n"
                + "    'acme/bank/accounts',\n"
                + "    'account.' || lower(TG_OP),\n"
                + "    jsonb_build_object('before', CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) END,\n"
                + "                       'after',  CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) END),\n"
                + "    p_key => COALESCE(NEW.id, OLD.id)::text);\n"
                + "  RETURN NULL;\n"
                + "END $$");
        st.execute(
            "CREATE TRIGGER account_outbox AFTER INSERT OR UPDATE OR DELETE ON "
                + s
                + ".account FOR EACH ROW EXECUTE FUNCTION "
                + s
                + ".account_changed()");
        st.execute("INSERT INTO " + s + ".account VALUES (7, 'ann', 10)");
        st.execute("UPDATE " + s + ".account SET balance = 25 WHERE id = 7");
        c.setAutoCommit(false);
        st.execute("UPDATE " + s + ".account SET balance = 999 WHERE id = 7");
        c.rollback();
        c.setAutoCommit(true);
        st.execute("DELETE FROM " + s + ".account WHERE id = 7");
      }
      Await.until(Duration.ofSeconds(30), "3 trigger events", () -> seen.size() >= 3);
      assertThat(seen)
          .extracting(Event::type)
          .containsExactly("account.insert", "account.update", "account.delete");
      int expected = Partitioner.kafkaCompatible().partition("7", 4);
      assertThat(seen).allMatch(e -> e.partition() == expected && "7".equals(e.key()));
      JsonNode update = JSON.readTree(seen.get(1).payload());
      assertThat(update.at("/before/balance").asInt()).isEqualTo(10);
      assertThat(update.at("/after/balance").asInt()).isEqualTo(25);
      assertThat(JSON.readTree(seen.get(2).payload()).get("after").isNull()).isTrue();
      assertThat(seen.get(0).contentType()).isEqualTo("application/json");
    }
  }

  /**
   * Java publishes carry their partition; SQL publishes leave it to the sequencer. Interleaved in
   * one transaction, they must still get consecutive sequences in publish order.
   */
  @Test
  void javaAndSqlPublishesOfOneKeyInterleavedKeepTheirOrder() throws Exception {
    try (TestDatabase db = TestDatabase.create("mixed")) {
      Boxline boxline = db.boxline(b -> b);
      TopicName t = TopicName.of("acme", "mixed");
      boxline.admin().createNamespace(NamespacePath.of("acme"));
      boxline.admin().createTopic(t, 4);
      boxline.admin().createSubscription(SubscriptionSpec.of("mixed", t));
      List<Event> seen = new CopyOnWriteArrayList<>();
      boxline.consumer("mixed").handler(seen::add).start();
      String s = db.schema();
      for (int round = 0; round < 3; round++) {
        boxline.inTransaction(
            tx -> {
              try (Statement st = tx.createStatement()) {
                for (int i = 0; i < 4; i++) {
                  boxline
                      .publisher()
                      .publish(
                          tx,
                          io.boxline.OutgoingEvent.builder(t)
                              .type("java")
                              .key("7")
                              .payload(new byte[1])
                              .build());
                  st.execute(
                      "SELECT " + s + ".publish('acme/mixed', 'sql', '{}'::jsonb, p_key => '7')");
                }
              }
              return null;
            });
      }
      Await.until(Duration.ofSeconds(30), "24 events", () -> seen.size() >= 24);
      int expected = Partitioner.kafkaCompatible().partition("7", 4);
      assertThat(seen).allMatch(e -> e.partition() == expected);
      assertThat(seen)
          .extracting(Event::sequence)
          .containsExactly(
              java.util.stream.LongStream.rangeClosed(1, 24).boxed().toArray(Long[]::new));
      for (int i = 0; i < 24; i++) {
        assertThat(seen.get(i).type()).isEqualTo(i % 2 == 0 ? "java" : "sql");
      }
    }
  }

  /**
   * An IN_TRANSACTION topic numbers Java publishes inside the transaction; rows published from SQL
   * still go through the outbox and the sequencer, so they follow the transaction's Java events,
   * and the partition stays gap-free.
   */
  @Test
  void sqlPublishesIntoAnInTransactionTopicFollowTheTransactionsJavaEvents() throws Exception {
    try (TestDatabase db = TestDatabase.create("direct_sql")) {
      Boxline boxline = db.boxline(b -> b);
      TopicName t = TopicName.of("acme", "direct");
      boxline.admin().createNamespace(NamespacePath.of("acme"));
      boxline.admin().createTopic(t, 4, io.boxline.Sequencing.IN_TRANSACTION);
      boxline.admin().createSubscription(SubscriptionSpec.of("direct", t));
      List<Event> seen = new CopyOnWriteArrayList<>();
      boxline.consumer("direct").handler(seen::add).start();
      String s = db.schema();
      for (int round = 0; round < 3; round++) {
        boxline.inTransaction(
            tx -> {
              try (Statement st = tx.createStatement()) {
                for (int i = 0; i < 2; i++) {
                  st.execute(
                      "SELECT " + s + ".publish('acme/direct', 'sql', '{}'::jsonb, p_key => '7')");
                  boxline
                      .publisher()
                      .publish(
                          tx,
                          io.boxline.OutgoingEvent.builder(t)
                              .type("java")
                              .key("7")
                              .payload(new byte[1])
                              .build());
                }
              }
              return null;
            });
        int round4 = 4 * (round + 1);
        // The next round's Java publish would otherwise race the sequencer for this round's rows.
        Await.until(Duration.ofSeconds(30), round4 + " events", () -> seen.size() >= round4);
      }
      assertThat(seen)
          .extracting(Event::sequence)
          .containsExactly(
              java.util.stream.LongStream.rangeClosed(1, 12).boxed().toArray(Long[]::new));
      // Each round: its two Java events when it published them, its two SQL rows after it
      // committed.
      for (int round = 0; round < 3; round++) {
        assertThat(seen.subList(round * 4, round * 4 + 4))
            .extracting(Event::type)
            .containsExactly("java", "java", "sql", "sql");
      }
      assertThat(boxline.stats().eventsSequenced()).isEqualTo(6);
    }
  }

  @Test
  void sqlPublishHonoursIdempotencyKeysAndRejectsUnknownTopics() throws Exception {
    try (TestDatabase db = TestDatabase.create("sqlpublish")) {
      Boxline boxline = db.boxline(b -> b);
      boxline.admin().createNamespace(NamespacePath.of("acme"));
      boxline.admin().createTopic(TopicName.of("acme", "t"), 1);
      String s = db.schema();
      try (Connection c = db.dataSource().getConnection();
          Statement st = c.createStatement()) {
        String call =
            "SELECT " + s + ".publish('acme/t', 'x', '{}'::jsonb, p_idempotency_key => 'once')";
        String first = single(st, call);
        String second = single(st, call);
        assertThat(second).isEqualTo(first);
        assertThatThrownBy(
                () -> single(st, "SELECT " + s + ".publish('acme/none', 'x', '{}'::jsonb)"))
            .isInstanceOf(SQLException.class)
            .hasMessageContaining("does not exist");
        assertThatThrownBy(() -> single(st, "SELECT " + s + ".publish('flat', 'x', '{}'::jsonb)"))
            .hasMessageContaining("no namespace");
      }
      boxline.admin().createSubscription(SubscriptionSpec.of("s", TopicName.of("acme", "t")));
      Await.until(
          Duration.ofSeconds(30),
          "the one event sequenced",
          () -> boxline.admin().lag("s"),
          l -> l.get(0).lastSequence() == 1);
    }
  }

  @Test
  void exportedDdlCreatesTheSchemaAndMigrateThenHasNothingToDo() throws Exception {
    try (TestDatabase db = TestDatabase.create("export")) {
      String ddl = JdbcStore.exportDdl(JdbcStore.Database.POSTGRESQL, db.schema(), "bx_");
      assertThat(ddl).contains("CREATE TABLE " + db.schema() + ".bx_log").doesNotContain("${");
      try (Connection c = db.dataSource().getConnection();
          Statement st = c.createStatement()) {
        st.execute(ddl);
      }
      Boxline boxline =
          db.boxline(
              b ->
                  b.store(
                      JdbcStore.builder(db.dataSource())
                          .schema(db.schema())
                          .tablePrefix("bx_")
                          .build()));
      boxline.admin().createNamespace(NamespacePath.of("x"));
      assertThat(boxline.admin().createTopic(TopicName.of("x", "t"), 2).partitions()).isEqualTo(2);
      try (Connection c = db.dataSource().getConnection();
          Statement st = c.createStatement()) {
        // Every migration the DDL recorded, and no more: start() found nothing to apply.
        long recorded = ddl.lines().filter(l -> l.contains("bx_schema_version (version")).count();
        assertThat(recorded).isGreaterThanOrEqualTo(2);
        assertThat(single(st, "SELECT count(*) FROM " + db.schema() + ".bx_schema_version"))
            .isEqualTo(Long.toString(recorded));
      }
      assertThatThrownBy(() -> JdbcStore.exportDdl(JdbcStore.Database.POSTGRESQL, "Bad-Schema", ""))
          .isInstanceOf(ValidationException.class);
    }
  }

  private static String single(Statement st, String sql) throws SQLException {
    try (ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }
}
