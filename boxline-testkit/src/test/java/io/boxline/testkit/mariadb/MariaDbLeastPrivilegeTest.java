package io.boxline.testkit.mariadb;

import static io.boxline.testkit.LeastPrivilegeWorkload.WAIT;
import static io.boxline.testkit.LeastPrivilegeWorkload.count;
import static io.boxline.testkit.LeastPrivilegeWorkload.execute;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.OutgoingEvent;
import io.boxline.StoreException;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import io.boxline.jdbc.internal.SqlScript;
import io.boxline.testkit.Await;
import io.boxline.testkit.LeastPrivilegeWorkload;
import io.boxline.testkit.MariaDbServer;
import java.nio.charset.StandardCharsets;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The least-privilege set-up of docs/guide/least-privilege.md on MariaDB: an owner user with every
 * privilege on Boxline's database migrates it, the application user holds SELECT, INSERT, UPDATE,
 * DELETE and EXECUTE on that database only and runs everything with {@code migrate(false)}; it
 * cannot change the database, and a tenant's application user cannot reach another tenant's
 * database.
 */
class MariaDbLeastPrivilegeTest {
  private HikariDataSource admin;
  private final List<Tenant> tenants = new ArrayList<>();
  private final List<AutoCloseable> closeFirst = new ArrayList<>();

  @BeforeEach
  void open() {
    admin = MariaDbServer.get().pool(2, "lp-admin");
  }

  @AfterEach
  void close() {
    for (int i = closeFirst.size() - 1; i >= 0; i--) {
      try {
        closeFirst.get(i).close();
      } catch (Exception e) {
        // keep closing; the users and databases go regardless
      }
    }
    for (Tenant t : tenants) {
      t.drop();
    }
    try {
      for (Tenant t : tenants) {
        assertThat(
                count(
                    admin,
                    "SELECT COUNT(*) FROM mysql.user WHERE user IN ('"
                        + t.owner
                        + "', '"
                        + t.app
                        + "')"))
            .as("users of " + t.database + " dropped")
            .isZero();
        assertThat(
                count(
                    admin,
                    "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '"
                        + t.database
                        + "'"))
            .as("database " + t.database + " dropped")
            .isZero();
      }
    } finally {
      admin.close();
    }
  }

  /** What an administrator runs before the first migration. */
  static List<String> setUpScript(String database, String owner, String app, String password) {
    return List.of(
        "CREATE USER '" + owner + "'@'%' IDENTIFIED BY '" + password + "'",
        "CREATE USER '" + app + "'@'%' IDENTIFIED BY '" + password + "'",
        "GRANT ALL PRIVILEGES ON " + database + ".* TO '" + owner + "'@'%'",
        "GRANT SELECT, INSERT, UPDATE, DELETE, EXECUTE ON " + database + ".* TO '" + app + "'@'%'");
  }

  private Tenant tenant(String hint) throws SQLException {
    Tenant t = new Tenant(hint);
    tenants.add(t); // dropped after the test whatever happens from here on
    execute(admin, setUpScript(t.database, t.owner, t.app, t.password).toArray(String[]::new));
    t.ownerPool = LeastPrivilegeWorkload.pool(MariaDbServer.get(), t.owner, t.password, 4);
    t.appPool = LeastPrivilegeWorkload.pool(MariaDbServer.get(), t.app, t.password, 16);
    return t;
  }

  private static void migrateAsOwner(Tenant t) {
    JdbcStore.builder(t.ownerPool).schema(t.database).build().migrate();
  }

  private Boxline appBoxline(Tenant t) {
    Boxline b =
        LeastPrivilegeWorkload.settings(Boxline.builder())
            .store(JdbcStore.builder(t.appPool).schema(t.database).build())
            .build();
    closeFirst.add(b);
    return b.start();
  }

  private static LeastPrivilegeWorkload.SqlPublish sqlPublish(String database) {
    return (tx, topic, key, json) -> {
      try (CallableStatement cs =
          tx.prepareCall("{call " + database + ".publish(?, ?, ?, ?, ?, ?, ?, ?)}")) {
        cs.setString(1, topic);
        cs.setString(2, "shop.sql");
        cs.setString(3, json);
        cs.setString(4, key);
        cs.setNull(5, Types.VARCHAR);
        cs.setNull(6, Types.VARCHAR);
        cs.setNull(7, Types.VARCHAR);
        cs.registerOutParameter(8, Types.CHAR);
        cs.execute();
      }
    };
  }

  /** MariaDB's access-denied errors: database 1044, table 1142, routine 1370. */
  private static void assertDenied(Throwable e, String what) {
    assertThat(e).as(what).isInstanceOf(SQLException.class);
    assertThat(((SQLException) e).getErrorCode()).as(what).isIn(1044, 1142, 1370);
  }

  @Test
  void theApplicationUserRunsEverythingWithDataPrivilegesOnly() throws Exception {
    Tenant t = tenant("run");
    migrateAsOwner(t);
    // The owner need not log in between migrations; its procedures (SQL SECURITY DEFINER) still
    // run for the application.
    t.ownerPool.close();
    execute(admin, "ALTER USER '" + t.owner + "'@'%' ACCOUNT LOCK");
    assertThatThrownBy(
            () ->
                java.sql.DriverManager.getConnection(MariaDbServer.get().url(), t.owner, t.password)
                    .close())
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("locked");
    Boxline boxline = appBoxline(t);
    LeastPrivilegeWorkload.run(boxline, t.appPool, t.database, sqlPublish(t.database));
  }

  @Test
  void theApplicationUserCannotChangeTheDatabase() throws Exception {
    Tenant t = tenant("ddl");
    migrateAsOwner(t);
    String d = t.database;
    String tablesSql =
        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '" + d + "'";
    long tables = count(admin, tablesSql);
    assertThat(tables).isGreaterThan(10);
    for (String ddl :
        List.of(
            "ALTER TABLE " + d + ".outbox ADD COLUMN x INT",
            "DROP TABLE " + d + ".log",
            "CREATE TABLE " + d + ".evil (x INT)",
            "CREATE INDEX evil ON " + d + ".log (event_type)",
            "TRUNCATE " + d + ".log",
            "DROP PROCEDURE " + d + ".publish",
            "CREATE PROCEDURE " + d + ".evil() SELECT 1",
            "GRANT SELECT ON " + d + ".log TO '" + t.owner + "'@'%'",
            "CREATE DATABASE " + d + "_evil",
            "DROP DATABASE " + d)) {
      assertThatThrownBy(() -> execute(t.appPool, ddl)).satisfies(e -> assertDenied(e, ddl));
    }
    assertThat(count(admin, tablesSql)).isEqualTo(tables);

    Boxline boxline =
        Boxline.builder().store(JdbcStore.builder(t.appPool).schema(d).build()).build();
    closeFirst.add(boxline);
    assertThatThrownBy(boxline::start)
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("cannot migrate Boxline's database " + d)
        .hasMessageContaining("database user '" + t.app + "' may not change it")
        .hasMessageContaining("Access denied")
        .hasMessageContaining("owner (migrator) role")
        .hasMessageContaining("migrate(false)");
  }

  /** Without EXECUTE the application can neither publish from SQL nor check consumers in. */
  @Test
  void executeIsNeeded() throws Exception {
    Tenant t = tenant("exec");
    migrateAsOwner(t);
    Boxline boxline = appBoxline(t);
    TopicName topic = TopicName.parse("acme/exec/events");
    boxline.admin().createNamespace(topic.namespace());
    boxline.admin().createTopic(topic, 2);
    execute(admin, "REVOKE EXECUTE ON " + t.database + ".* FROM '" + t.app + "'@'%'");
    assertThatThrownBy(
            () -> {
              try (Connection c = t.appPool.getConnection()) {
                sqlPublish(t.database).publish(c, topic.toString(), "k", "{}");
              }
            })
        .satisfies(e -> assertDenied(e, "CALL publish without EXECUTE"));
    execute(admin, "GRANT EXECUTE ON " + t.database + ".* TO '" + t.app + "'@'%'");
    try (Connection c = t.appPool.getConnection()) {
      sqlPublish(t.database).publish(c, topic.toString(), "k", "{}");
    }
    assertThat(count(t.appPool, "SELECT COUNT(*) FROM " + t.database + ".log")).isLessThan(2);
    Await.until(
        WAIT,
        "the SQL-published event sequenced",
        () -> count(t.appPool, "SELECT COUNT(*) FROM " + t.database + ".log") == 1);
  }

  @Test
  void tenantsOnSeparateDatabasesCannotReachEachOther() throws Exception {
    Tenant a = tenant("tena");
    migrateAsOwner(a);
    // Tenant b's owner runs the exported DDL instead.
    Tenant b = tenant("tenb");
    try (Connection c = b.ownerPool.getConnection();
        java.sql.Statement st = c.createStatement()) {
      for (String statement :
          SqlScript.statements(JdbcStore.exportDdl(JdbcStore.Database.MARIADB, b.database, ""))) {
        st.execute(statement);
      }
    }
    for (Tenant[] pair : new Tenant[][] {{a, b}, {b, a}}) {
      Tenant me = pair[0];
      String other = pair[1].database;
      for (String sql :
          List.of(
              "SELECT COUNT(*) FROM " + other + ".log",
              "SELECT COUNT(*) FROM " + other + ".outbox",
              "INSERT INTO " + other + ".namespace (path, created_at) VALUES ('intruder', 0)",
              "UPDATE " + other + ".cursor SET position = 0",
              "DELETE FROM " + other + ".parked",
              "CALL "
                  + other
                  + ".publish('acme/shop/orders', 't', '{}', NULL, NULL, NULL, NULL, @e)",
              "CALL " + other + ".check_in('x', 'y', 1, 1000000, NULL)")) {
        assertThatThrownBy(() -> execute(me.appPool, sql))
            .satisfies(e -> assertDenied(e, me.app + ": " + sql));
      }
    }

    Boxline boxA = appBoxline(a);
    Boxline boxB = appBoxline(b);
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
    Await.until(WAIT, "tenant a's 50 events", () -> seenA.size() == 50);
    Await.until(WAIT, "tenant b's 50 events", () -> seenB.size() == 50);
    assertThat(seenA).allMatch(e -> e.startsWith("a-"));
    assertThat(seenB).allMatch(e -> e.startsWith("b-"));
  }

  private static OutgoingEvent event(TopicName topic, String key, String body) {
    return OutgoingEvent.builder(topic)
        .type("t")
        .key(key)
        .contentType("text/plain")
        .payload(body.getBytes(StandardCharsets.UTF_8))
        .build();
  }

  /** One tenant's database and users; {@link #drop()} removes them. */
  private final class Tenant {
    final String database;
    final String owner;
    final String app;
    final String password = "pw" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
    HikariDataSource ownerPool;
    HikariDataSource appPool;

    Tenant(String hint) {
      database =
          "bxt_lp_"
              + hint
              + "_"
              + Long.toString(ThreadLocalRandom.current().nextLong() & 0xffffffffL, 36);
      owner = database + "_owner";
      app = database + "_app";
    }

    void drop() {
      for (HikariDataSource pool : new HikariDataSource[] {appPool, ownerPool}) {
        if (pool != null) {
          pool.close();
        }
      }
      quietly("DROP DATABASE IF EXISTS " + database);
      quietly("DROP USER IF EXISTS '" + app + "'@'%', '" + owner + "'@'%'");
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
