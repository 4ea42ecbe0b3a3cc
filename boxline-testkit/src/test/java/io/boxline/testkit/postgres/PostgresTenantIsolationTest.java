package io.boxline.testkit.postgres;

import static io.boxline.testkit.LeastPrivilegeWorkload.count;
import static io.boxline.testkit.LeastPrivilegeWorkload.execute;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.OutgoingEvent;
import io.boxline.StoreException;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import io.boxline.testkit.LeastPrivilegeWorkload;
import io.boxline.testkit.PostgresServer;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Tenants on separate schemas, seen through Boxline's Java API: an application role that runs its
 * own tenant's Boxline (publish, admin reads) gets a permission error, and nothing else, when a
 * Boxline is pointed at another tenant's schema, and the catalog views it can read do not list the
 * other tenant's tables. The roles and schemas are made with {@link
 * PostgresLeastPrivilegeTest#setUpScript}, the script of docs/guide/least-privilege.md.
 */
class PostgresTenantIsolationTest {
  private HikariDataSource admin;
  private final List<String[]> tenants = new ArrayList<>(); // schema, owner, app
  private final List<AutoCloseable> closeFirst = new ArrayList<>();

  @BeforeEach
  void open() {
    admin = PostgresServer.get().pool(2, "iso-admin");
  }

  @AfterEach
  void close() throws SQLException {
    for (int i = closeFirst.size() - 1; i >= 0; i--) {
      try {
        closeFirst.get(i).close();
      } catch (Exception e) {
        // keep closing; the roles and schemas go regardless
      }
    }
    for (String[] t : tenants) {
      execute(
          admin,
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename IN ('"
              + t[1]
              + "', '"
              + t[2]
              + "')",
          "DROP SCHEMA IF EXISTS " + t[0] + " CASCADE");
      for (String role : new String[] {t[2], t[1]}) {
        execute(admin, "DROP OWNED BY " + role + " CASCADE", "DROP ROLE " + role);
        assertThat(count(admin, "SELECT count(*) FROM pg_roles WHERE rolname = '" + role + "'"))
            .isZero();
      }
    }
    admin.close();
  }

  /** Creates a tenant's roles and schema, migrates it as the owner; returns the app role's pool. */
  private HikariDataSource tenant(String[] t, String password) throws SQLException {
    tenants.add(t);
    execute(
        admin,
        PostgresLeastPrivilegeTest.setUpScript(t[0], t[1], t[2], password).toArray(String[]::new));
    try (HikariDataSource owner =
        LeastPrivilegeWorkload.pool(PostgresServer.get(), t[1], password, 2)) {
      JdbcStore.builder(owner).schema(t[0]).build().migrate();
    }
    HikariDataSource app = LeastPrivilegeWorkload.pool(PostgresServer.get(), t[2], password, 8);
    closeFirst.add(app);
    return app;
  }

  private static String[] names(String hint) {
    String schema =
        "bxt_iso_" + hint + "_" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 33, 36);
    return new String[] {schema, schema + "_owner", schema + "_app"};
  }

  private Boxline boxline(HikariDataSource pool, String schema) {
    Boxline b =
        LeastPrivilegeWorkload.settings(Boxline.builder())
            .sequencer(false) // the test reads and writes; nothing needs sequencing
            .store(JdbcStore.builder(pool).schema(schema).build())
            .build();
    closeFirst.add(b);
    return b;
  }

  @Test
  void aTenantsRoleRunsItsOwnBoxlineAndIsDeniedTheOthers() throws Exception {
    String password = "pw" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
    String[] a = names("a");
    String[] b = names("b");
    HikariDataSource appA = tenant(a, password);
    HikariDataSource appB = tenant(b, password);

    // Tenant b has a topic, a subscription and an event of its own.
    Boxline boxB = boxline(appB, b[0]).start();
    TopicName topic = TopicName.parse("acme/shop/orders");
    boxB.admin().createNamespace(topic.namespace());
    boxB.admin().createTopic(topic, 2);
    boxB.admin().createSubscription(SubscriptionSpec.of("billing", topic));
    boxB.inTransaction(tx -> boxB.publisher().publish(tx, event(topic, "b-secret")));

    // Tenant a's role runs tenant a: admin calls, admin reads and a publish.
    Boxline boxA = boxline(appA, a[0]).start();
    boxA.admin().createNamespace(topic.namespace());
    boxA.admin().createTopic(topic, 2);
    boxA.inTransaction(tx -> boxA.publisher().publish(tx, event(topic, "a-own")));
    assertThat(boxA.admin().topics()).extracting(t -> t.name()).containsExactly(topic);
    assertThat(boxA.admin().subscriptions()).isEmpty();
    assertThat(boxA.admin().outboxBacklog()).isNotNull();

    long outboxB = count(appB, "SELECT count(*) FROM " + b[0] + ".outbox");
    long namespacesB = count(appB, "SELECT count(*) FROM " + b[0] + ".namespace");
    assertThat(outboxB).isEqualTo(1);

    // The same role pointed at tenant b's schema: starting, or else every call, is a permission
    // error naming the schema.
    Boxline intruder = boxline(appA, b[0]);
    String denied = "permission denied for schema " + b[0];
    boolean started;
    try {
      intruder.start();
      started = true;
    } catch (RuntimeException e) {
      assertThat(e).hasStackTraceContaining(denied);
      started = false;
    }
    if (started) {
      for (Runnable call :
          List.<Runnable>of(
              () -> intruder.admin().topics(),
              () -> intruder.admin().subscriptions(),
              () -> intruder.admin().lag("billing"),
              () ->
                  intruder.inTransaction(tx -> intruder.publisher().publish(tx, event(topic, "x"))),
              () -> intruder.admin().createNamespace(topic.namespace()))) {
        assertThatThrownBy(call::run)
            .isInstanceOf(StoreException.class)
            .hasStackTraceContaining(denied);
      }
    }

    // The catalog views a role reads list only what it may use: not one of tenant b's tables.
    assertThat(
            count(
                appA,
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = '"
                    + b[0]
                    + "'"))
        .isZero();
    assertThat(
            count(
                appA,
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = '"
                    + a[0]
                    + "'"))
        .isGreaterThan(10);
    // Nothing of tenant a's reached tenant b, and tenant b's event is still its only one.
    assertThat(count(appB, "SELECT count(*) FROM " + b[0] + ".outbox")).isEqualTo(outboxB);
    assertThat(count(appB, "SELECT count(*) FROM " + b[0] + ".namespace")).isEqualTo(namespacesB);
  }

  private static OutgoingEvent event(TopicName topic, String body) {
    return OutgoingEvent.builder(topic)
        .type("t")
        .contentType("text/plain")
        .payload(body.getBytes(StandardCharsets.UTF_8))
        .build();
  }
}
