package io.boxline.testkit.postgres;

import static io.boxline.testkit.LeastPrivilegeWorkload.WAIT;
import static io.boxline.testkit.LeastPrivilegeWorkload.count;
import static io.boxline.testkit.LeastPrivilegeWorkload.execute;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.StoreException;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import io.boxline.testkit.Await;
import io.boxline.testkit.LeastPrivilegeWorkload;
import io.boxline.testkit.LeastPrivilegeWorkload.StoreLog;
import io.boxline.testkit.PostgresServer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.logging.Level;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The least-privilege set-up of docs/guide/least-privilege.md on PostgreSQL: an owner role migrates
 * Boxline's schema, the application role holds only data privileges (USAGE on the schema,
 * SELECT/INSERT/UPDATE/DELETE on the tables, USAGE/SELECT/UPDATE on the sequences, EXECUTE on the
 * functions) and runs everything with {@code migrate(false)}; it cannot change the schema, and a
 * tenant's application role cannot reach another tenant's schema.
 */
class PostgresLeastPrivilegeTest {
  private HikariDataSource admin;
  private final List<Tenant> tenants = new ArrayList<>();
  private final List<AutoCloseable> closeFirst = new ArrayList<>();

  @BeforeEach
  void open() {
    admin = PostgresServer.get().pool(2, "lp-admin");
  }

  @AfterEach
  void close() {
    for (int i = closeFirst.size() - 1; i >= 0; i--) {
      try {
        closeFirst.get(i).close();
      } catch (Exception e) {
        // keep closing; the roles and schemas go regardless
      }
    }
    for (Tenant t : tenants) {
      t.drop();
    }
    try {
      for (Tenant t : tenants) {
        for (String role : List.of(t.owner, t.app)) {
          assertThat(count(admin, "SELECT count(*) FROM pg_roles WHERE rolname = '" + role + "'"))
              .as("role " + role + " dropped")
              .isZero();
        }
        assertThat(
                count(
                    admin, "SELECT count(*) FROM pg_namespace WHERE nspname = '" + t.schema + "'"))
            .as("schema " + t.schema + " dropped")
            .isZero();
      }
    } finally {
      admin.close();
    }
  }

  /** What an administrator runs before the first migration: roles, schema, default privileges. */
  static List<String> setUpScript(String schema, String owner, String app, String password) {
    return List.of(
        "CREATE ROLE " + owner + " LOGIN PASSWORD '" + password + "'",
        "CREATE ROLE " + app + " LOGIN PASSWORD '" + password + "'",
        "CREATE SCHEMA " + schema + " AUTHORIZATION " + owner,
        "GRANT USAGE ON SCHEMA " + schema + " TO " + app,
        "ALTER DEFAULT PRIVILEGES FOR ROLE "
            + owner
            + " IN SCHEMA "
            + schema
            + " GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO "
            + app,
        "ALTER DEFAULT PRIVILEGES FOR ROLE "
            + owner
            + " IN SCHEMA "
            + schema
            + " GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO "
            + app,
        "ALTER DEFAULT PRIVILEGES FOR ROLE " + owner + " REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC",
        "ALTER DEFAULT PRIVILEGES FOR ROLE "
            + owner
            + " IN SCHEMA "
            + schema
            + " GRANT EXECUTE ON FUNCTIONS TO "
            + app);
  }

  /** The grants on what exists already (a schema migrated before the default privileges). */
  static List<String> grantExisting(String schema, String app) {
    return List.of(
        "GRANT USAGE ON SCHEMA " + schema + " TO " + app,
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + schema + " TO " + app,
        "GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA " + schema + " TO " + app,
        "REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA " + schema + " FROM PUBLIC",
        "GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA " + schema + " TO " + app);
  }

  /** A schema with an owner role and an application role, made by the set-up script. */
  private Tenant tenant(String hint) throws SQLException {
    Tenant t = new Tenant(hint);
    tenants.add(t); // dropped after the test whatever happens from here on
    execute(admin, setUpScript(t.schema, t.owner, t.app, t.password).toArray(String[]::new));
    t.ownerPool = LeastPrivilegeWorkload.pool(PostgresServer.get(), t.owner, t.password, 16);
    t.appPool = LeastPrivilegeWorkload.pool(PostgresServer.get(), t.app, t.password, 16);
    return t;
  }

  /** The owner migrates, as a deployment's migration step would. */
  private static void migrateAsOwner(Tenant t) {
    JdbcStore.builder(t.ownerPool).schema(t.schema).build().migrate();
  }

  /** A started Boxline on the tenant's schema as its application role, closed after the test. */
  private Boxline appBoxline(Tenant t, java.util.function.UnaryOperator<JdbcStore.Builder> store) {
    Boxline b =
        LeastPrivilegeWorkload.settings(Boxline.builder())
            .store(store.apply(JdbcStore.builder(t.appPool).schema(t.schema)).build())
            .build();
    closeFirst.add(b);
    return b.start();
  }

  private static LeastPrivilegeWorkload.SqlPublish sqlPublish(String schema) {
    return (tx, topic, key, json) -> {
      try (PreparedStatement ps =
          tx.prepareStatement("SELECT " + schema + ".publish(?, 'shop.sql', ?::jsonb, ?)")) {
        ps.setString(1, topic);
        ps.setString(2, json);
        ps.setString(3, key);
        ps.execute();
      }
    };
  }

  @Test
  void theApplicationRoleRunsEverythingWithDataPrivilegesOnly() throws Exception {
    Tenant t = tenant("run");
    migrateAsOwner(t);
    // The application never reads the migrations' record (only migrate() does).
    execute(admin, "REVOKE ALL ON " + t.schema + ".schema_version FROM " + t.app);
    // Whatever the server's setting: autovacuum off for the outbox, so the retention loop vacuums.
    execute(t.ownerPool, "ALTER TABLE " + t.schema + ".outbox SET (autovacuum_enabled = false)");
    try (StoreLog log = new StoreLog()) {
      Boxline boxline = appBoxline(t, s -> s.outboxVacuumEvery(500));
      LeastPrivilegeWorkload.run(boxline, t.appPool, t.schema, sqlPublish(t.schema));

      // Neither vacuum can run as the application role: the server skips the tables (a warning,
      // not an error). Boxline says so once each, at WARNING, naming the user; repeats go to DEBUG.
      String retention = "the retention loop cannot vacuum them as database user '" + t.app + "'";
      Await.until(
          WAIT,
          "the retention loop's vacuum skipped twice, warned about once",
          () -> log.messages(Level.FINE, retention).size() >= 1);
      assertThat(log.messages(Level.WARNING, retention))
          .singleElement()
          .asString()
          .contains("only table or database owner can vacuum it")
          .contains("vacuumWhenAutovacuumOff(false)")
          .contains("logged once");
      String outbox = "the sequencer cannot vacuum the outbox as database user '" + t.app + "'";
      Await.until(
          WAIT,
          "an outbox vacuum skipped (1,200 events, one vacuum per 500)",
          () -> boxline.stats().outboxVacuumFailures() >= 1);
      long failures = boxline.stats().outboxVacuumFailures();
      TopicName more = TopicName.parse("acme/shop/more");
      boxline.admin().createTopic(more, 2);
      List<Object> events = new ArrayList<>();
      for (int i = 0; i < 600; i++) {
        events.add(event(more, "k" + i, "e" + i));
      }
      boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, events));
      Await.until(
          WAIT,
          "another outbox vacuum skipped",
          () -> boxline.stats().outboxVacuumFailures() > failures);
      assertThat(boxline.stats().outboxVacuums()).isZero();
      assertThat(log.messages(Level.WARNING, outbox))
          .singleElement()
          .asString()
          .contains("outboxVacuumEvery(0)");
      assertThat(log.messages(Level.FINE, outbox)).isNotEmpty();
      assertThat(
              count(
                  admin,
                  "SELECT vacuum_count FROM pg_stat_user_tables WHERE schemaname = '"
                      + t.schema
                      + "' AND relname = 'outbox'"))
          .as("nobody vacuumed the outbox")
          .isZero();
    }
  }

  /**
   * The grants are needed as they are: without SELECT or UPDATE on the {@code publish_woken}
   * sequence or EXECUTE on the function the SQL publish fails; without the id sequence's USAGE and
   * UPDATE, or INSERT on a table, the admin calls do. Nothing on {@code schema_version} is needed.
   */
  @Test
  void eachGrantIsNeeded() throws Exception {
    Tenant t = tenant("need");
    migrateAsOwner(t);
    String s = t.schema;
    execute(admin, "REVOKE ALL ON " + s + ".schema_version FROM " + t.app);
    Boxline boxline =
        LeastPrivilegeWorkload.settings(Boxline.builder())
            .sequencer(false)
            .store(JdbcStore.builder(t.appPool).schema(s).build())
            .build();
    closeFirst.add(boxline);
    boxline.start();
    TopicName topic = TopicName.parse("acme/need/events");
    boxline.admin().createNamespace(topic.namespace());
    boxline.admin().createTopic(topic, 2);
    LeastPrivilegeWorkload.SqlPublish publish = sqlPublish(s);
    for (String[] privilege :
        new String[][] {
          {"SELECT ON SEQUENCE " + s + ".publish_woken", "sequence publish_woken"},
          {"UPDATE ON SEQUENCE " + s + ".publish_woken", "sequence publish_woken"},
          {
            "EXECUTE ON FUNCTION " + s + ".publish(text, text, jsonb, text, jsonb, text, text)",
            "function publish"
          }
        }) {
      execute(admin, "REVOKE " + privilege[0] + " FROM " + t.app);
      assertThatThrownBy(
              () -> {
                try (Connection c = t.appPool.getConnection()) {
                  publish.publish(c, topic.toString(), "k", "{}");
                }
              })
          .as("without " + privilege[0])
          .isInstanceOfSatisfying(
              SQLException.class,
              e ->
                  assertThat(e.getSQLState() + " " + e.getMessage())
                      .startsWith("42501")
                      .contains("permission denied for " + privilege[1]));
      execute(admin, "GRANT " + privilege[0] + " TO " + t.app);
    }
    try (Connection c = t.appPool.getConnection()) {
      publish.publish(c, topic.toString(), "k", "{}");
    }
    assertThat(count(t.appPool, "SELECT count(*) FROM " + s + ".outbox")).isEqualTo(1);

    execute(admin, "REVOKE USAGE, UPDATE ON SEQUENCE " + s + ".namespace_id_seq FROM " + t.app);
    assertThatThrownBy(() -> boxline.admin().createNamespace(NamespacePath.of("other")))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("permission denied for sequence namespace_id_seq");
    execute(admin, "GRANT USAGE, UPDATE ON SEQUENCE " + s + ".namespace_id_seq TO " + t.app);
    boxline.admin().createNamespace(NamespacePath.of("other"));

    execute(admin, "REVOKE INSERT ON " + s + ".subscription FROM " + t.app);
    assertThatThrownBy(
            () -> boxline.admin().createSubscription(SubscriptionSpec.of("billing", topic)))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("permission denied for table subscription");
  }

  @Test
  void theOwnerVacuumsWithoutAWarning() throws Exception {
    Tenant t = tenant("owner");
    migrateAsOwner(t);
    execute(t.ownerPool, "ALTER TABLE " + t.schema + ".outbox SET (autovacuum_enabled = false)");
    try (StoreLog log = new StoreLog()) {
      Boxline boxline =
          LeastPrivilegeWorkload.settings(Boxline.builder())
              .store(JdbcStore.builder(t.ownerPool).schema(t.schema).outboxVacuumEvery(100).build())
              .build();
      closeFirst.add(boxline);
      boxline.start();
      TopicName topic = TopicName.parse("acme/owner/events");
      boxline.admin().createNamespace(topic.namespace());
      boxline.admin().createTopic(topic, 2);
      List<Object> events = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        events.add(event(topic, "k" + i, "e" + i));
      }
      for (int round = 1; round <= 2; round++) {
        boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, events));
        int expected = round;
        Await.until(
            WAIT,
            "the owner's outbox vacuum number " + round,
            () -> boxline.stats().outboxVacuums() >= expected);
      }
      assertThat(boxline.stats().outboxVacuumFailures()).isZero();
      assertThat(log.messages(Level.WARNING, "cannot vacuum")).isEmpty();
    }
  }

  @Test
  void theApplicationRoleCannotChangeTheSchema() throws Exception {
    Tenant t = tenant("ddl");
    migrateAsOwner(t);
    String s = t.schema;
    long tables = count(admin, "SELECT count(*) FROM pg_tables WHERE schemaname = '" + s + "'");
    assertThat(tables).isGreaterThan(10);
    for (String ddl :
        List.of(
            "ALTER TABLE " + s + ".outbox ADD COLUMN x integer",
            "ALTER TABLE " + s + ".log SET (autovacuum_enabled = false)",
            "DROP TABLE " + s + ".log",
            "CREATE TABLE " + s + ".evil (x integer)",
            "CREATE INDEX evil ON " + s + ".log (event_type)",
            "TRUNCATE " + s + ".log",
            "CREATE OR REPLACE FUNCTION "
                + s
                + ".sequencer_abort(message text) RETURNS boolean"
                + " LANGUAGE sql AS 'SELECT true'",
            "DROP FUNCTION " + s + ".murmur2_partition(text, integer)",
            "ALTER SEQUENCE " + s + ".topic_id_seq RESTART",
            "CREATE SCHEMA " + s + "_evil",
            "DROP SCHEMA " + s + " CASCADE")) {
      assertThatThrownBy(() -> execute(t.appPool, ddl))
          .as(ddl)
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getSQLState()).as(ddl).isEqualTo("42501"));
    }
    assertThat(count(admin, "SELECT count(*) FROM pg_tables WHERE schemaname = '" + s + "'"))
        .isEqualTo(tables);
    // Nor can it pass its privileges on: PostgreSQL only warns ("no privileges were granted").
    execute(t.appPool, "GRANT SELECT ON " + s + ".log TO PUBLIC");
    assertThat(
            count(
                admin,
                "SELECT count(*) FROM information_schema.role_table_grants WHERE table_schema = '"
                    + s
                    + "' AND grantee = 'PUBLIC'"))
        .isZero();

    // migrate(true), the default, under the application role fails at start() and says what to do,
    // although the schema is up to date.
    Boxline boxline =
        Boxline.builder().store(JdbcStore.builder(t.appPool).schema(s).build()).build();
    closeFirst.add(boxline);
    assertThatThrownBy(boxline::start)
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("cannot migrate Boxline's schema " + s)
        .hasMessageContaining("database user '" + t.app + "' may not change it")
        .hasMessageContaining("permission denied")
        .hasMessageContaining("owner (migrator) role")
        .hasMessageContaining("migrate(false)");
  }

  @Test
  void tenantsOnSeparateSchemasCannotReachEachOther() throws Exception {
    Tenant a = tenant("tena");
    migrateAsOwner(a);
    // Tenant b's owner runs the exported DDL (with no CREATE privilege on the database), and the
    // administrator grants on what it created.
    Tenant b = tenant("tenb");
    execute(b.ownerPool, JdbcStore.exportDdl(JdbcStore.Database.POSTGRESQL, b.schema, ""));
    execute(admin, grantExisting(b.schema, b.app).toArray(String[]::new));

    for (Tenant[] pair : new Tenant[][] {{a, b}, {b, a}}) {
      Tenant me = pair[0];
      String other = pair[1].schema;
      for (String sql :
          List.of(
              "SELECT count(*) FROM " + other + ".log",
              "SELECT count(*) FROM " + other + ".outbox",
              "INSERT INTO " + other + ".namespace (path) VALUES ('intruder')",
              "UPDATE " + other + ".cursor SET position = 0",
              "DELETE FROM " + other + ".parked",
              "SELECT " + other + ".publish('acme/shop/orders', 't', '{}'::jsonb)",
              "SELECT nextval('" + other + ".topic_id_seq')")) {
        assertThatThrownBy(() -> execute(me.appPool, sql))
            .as(me.app + ": " + sql)
            .isInstanceOfSatisfying(
                SQLException.class,
                e -> assertThat(e.getSQLState()).as(me.app + ": " + sql).isEqualTo("42501"));
      }
    }

    // Both tenants run the same topic and subscription names; each sees only its own events.
    Boxline boxA = appBoxline(a, s -> s);
    Boxline boxB = appBoxline(b, s -> s);
    Set<String> seenA = ConcurrentHashMap.newKeySet();
    Set<String> seenB = ConcurrentHashMap.newKeySet();
    TopicName topic = TopicName.parse("acme/shop/orders");
    for (Boxline box : List.of(boxA, boxB)) {
      box.admin().createNamespace(topic.namespace());
      box.admin().createTopic(topic, 2);
      box.admin().createSubscription(SubscriptionSpec.of("billing", topic));
    }
    Consumer ca =
        boxA.consumer("billing")
            .handler(e -> seenA.add(new String(e.payload(), StandardCharsets.UTF_8)))
            .start();
    Consumer cb =
        boxB.consumer("billing")
            .handler(e -> seenB.add(new String(e.payload(), StandardCharsets.UTF_8)))
            .start();
    closeFirst.add(ca);
    closeFirst.add(cb);
    for (int i = 0; i < 50; i++) {
      String n = Integer.toString(i);
      boxA.inTransaction(tx -> boxA.publisher().publish(tx, event(topic, "k" + n, "a-" + n)));
      boxB.inTransaction(tx -> boxB.publisher().publish(tx, event(topic, "k" + n, "b-" + n)));
    }
    try (Connection tx = a.appPool.getConnection()) {
      sqlPublish(a.schema).publish(tx, topic.toString(), "sql", "{\"tenant\": \"a\"}");
    }
    Await.until(WAIT, "tenant a's 51 events", () -> seenA.size() == 51);
    Await.until(WAIT, "tenant b's 50 events", () -> seenB.size() == 50);
    assertThat(seenA).allMatch(e -> e.startsWith("a-") || e.contains("\"a\""));
    assertThat(seenB).allMatch(e -> e.startsWith("b-"));
    assertThat(count(a.appPool, "SELECT count(*) FROM " + a.schema + ".log")).isEqualTo(51);
    assertThat(count(b.appPool, "SELECT count(*) FROM " + b.schema + ".log")).isEqualTo(50);
  }

  private static OutgoingEvent event(TopicName topic, String key, String body) {
    return OutgoingEvent.builder(topic)
        .type("t")
        .key(key)
        .contentType("text/plain")
        .payload(body.getBytes(StandardCharsets.UTF_8))
        .build();
  }

  /** One tenant's schema and roles; {@link #drop()} removes them and everything they own. */
  private final class Tenant {
    final String schema;
    final String owner;
    final String app;
    final String password = "pw" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
    HikariDataSource ownerPool;
    HikariDataSource appPool;

    Tenant(String hint) {
      schema =
          "bxt_lp_"
              + hint
              + "_"
              + Long.toString(ThreadLocalRandom.current().nextLong() & 0xffffffffL, 36);
      owner = schema + "_owner";
      app = schema + "_app";
    }

    /** Closes the pools, ends the roles' sessions, drops the schema, what they own and them. */
    void drop() {
      for (DataSource pool : new DataSource[] {appPool, ownerPool}) {
        if (pool != null) {
          ((HikariDataSource) pool).close();
        }
      }
      quietly(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename IN ('"
              + owner
              + "', '"
              + app
              + "')");
      quietly("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
      for (String role : List.of(app, owner)) {
        if (count(admin, "SELECT count(*) FROM pg_roles WHERE rolname = '" + role + "'") > 0) {
          quietly("DROP OWNED BY " + role + " CASCADE");
          quietly("DROP ROLE " + role);
        }
      }
    }

    private void quietly(String sql) {
      try {
        execute(admin, sql);
      } catch (SQLException e) {
        System.err.println("least-privilege clean-up: " + sql + ": " + e.getMessage());
      }
    }
  }
}
