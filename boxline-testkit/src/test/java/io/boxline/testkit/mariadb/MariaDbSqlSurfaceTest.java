package io.boxline.testkit.mariadb;

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
import io.boxline.jdbc.internal.SqlScript;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * MariaDB-only surfaces: the SQL-level publish procedure, the trigger recipe of docs/mariadb.md,
 * and DDL export.
 */
class MariaDbSqlSurfaceTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static String image(String row) {
    return "JSON_OBJECT('id', "
        + row
        + ".id, 'owner', "
        + row
        + ".owner, 'balance', "
        + row
        + ".balance)";
  }

  @Test
  void triggersPublishBeforeAndAfterRowImagesInTheWritersTransaction() throws Exception {
    try (TestDatabase db = TestDatabase.createMariaDb("trigger")) {
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
        // The recipe from docs/mariadb.md: one trigger per operation (MariaDB and MySQL have no
        // multi-event triggers).
        st.execute(
            "CREATE TABLE "
                + s
                + ".account (id BIGINT PRIMARY KEY, owner VARCHAR(64), balance DECIMAL(12, 2))");
        String[][] ops = {
          {"INSERT", "NULL", image("NEW"), "NEW.id"},
          {"UPDATE", image("OLD"), image("NEW"), "NEW.id"},
          {"DELETE", image("OLD"), "NULL", "OLD.id"}
        };
        for (String[] op : ops) {
          st.execute(
              "CREATE TRIGGER "
                  + s
                  + ".account_"
                  + op[0].toLowerCase()
                  + " AFTER "
                  + op[0]
                  + " ON "
                  + s
                  + ".account FOR EACH ROW\n"
                  + "BEGIN\n"
                  + "  DECLARE v_event_id CHAR(36);\n"
                  + "  CALL "
                  + s
                  + ".publish('acme/bank/accounts', 'account."
                  + op[0].toLowerCase()
                  + "',\n"
                  + "       JSON_OBJECT('before', "
                  + op[1]
                  + ", 'after', "
                  + op[2]
                  + "),\n"
                  + "       "
                  + op[3]
                  + ", NULL, NULL, NULL, v_event_id);\n"
                  + "END");
        }
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

  @Test
  void sqlPublishHonoursIdempotencyKeysAndRejectsUnknownTopics() throws Exception {
    try (TestDatabase db = TestDatabase.createMariaDb("sqlpublish")) {
      Boxline boxline = db.boxline(b -> b);
      boxline.admin().createNamespace(NamespacePath.of("acme"));
      boxline.admin().createTopic(TopicName.of("acme", "t"), 1);
      String s = db.schema();
      try (Connection c = db.dataSource().getConnection()) {
        String first = publish(c, s, "acme/t", "{}", "once");
        String second = publish(c, s, "acme/t", "{\"other\": 1}", "once");
        assertThat(first).hasSize(36);
        assertThat(second).isEqualTo(first);
        assertThatThrownBy(() -> publish(c, s, "acme/none", "{}", null))
            .isInstanceOf(SQLException.class)
            .hasMessageContaining("boxline: topic \"acme/none\" does not exist");
        assertThatThrownBy(() -> publish(c, s, "flat", "{}", null))
            .hasMessageContaining("no namespace");
        assertThatThrownBy(() -> publish(c, s, "acme/t", "not json", null))
            .hasMessageContaining("must be JSON");
      }
      boxline.admin().createSubscription(SubscriptionSpec.of("s", TopicName.of("acme", "t")));
      Await.until(
          Duration.ofSeconds(30),
          "the one event sequenced",
          () -> boxline.admin().lag("s"),
          l -> l.get(0).lastSequence() == 1);
    }
  }

  private static String publish(
      Connection c, String schema, String topic, String payload, String idempotencyKey)
      throws SQLException {
    try (CallableStatement cs =
        c.prepareCall("{call " + schema + ".publish(?, ?, ?, ?, ?, ?, ?, ?)}")) {
      cs.setString(1, topic);
      cs.setString(2, "x");
      cs.setString(3, payload);
      cs.setNull(4, Types.VARCHAR);
      cs.setNull(5, Types.VARCHAR);
      cs.setString(6, idempotencyKey);
      cs.setNull(7, Types.VARCHAR);
      cs.registerOutParameter(8, Types.CHAR);
      cs.execute();
      return cs.getString(8);
    }
  }

  @Test
  void exportedDdlCreatesTheSchemaAndMigrateThenHasNothingToDo() throws Exception {
    try (TestDatabase db = TestDatabase.createMariaDb("export")) {
      String ddl = JdbcStore.exportDdl(JdbcStore.Database.MARIADB, db.schema(), "bx_");
      assertThat(ddl)
          .contains("CREATE TABLE IF NOT EXISTS " + db.schema() + ".bx_log")
          .contains("DELIMITER $$")
          .doesNotContain("${");
      assertThat(JdbcStore.exportDdl(JdbcStore.Database.MYSQL, db.schema(), "bx_")).isEqualTo(ddl);
      try (Connection c = db.dataSource().getConnection();
          Statement st = c.createStatement()) {
        for (String statement : SqlScript.statements(ddl)) {
          st.execute(statement);
        }
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
        assertThat(recorded).isGreaterThanOrEqualTo(4);
        try (ResultSet rs =
            st.executeQuery("SELECT COUNT(*) FROM " + db.schema() + ".bx_schema_version")) {
          rs.next();
          assertThat(rs.getLong(1)).isEqualTo(recorded);
        }
      }
      assertThatThrownBy(() -> JdbcStore.exportDdl(JdbcStore.Database.MARIADB, "Bad-Schema", ""))
          .isInstanceOf(ValidationException.class);
    }
  }
}
