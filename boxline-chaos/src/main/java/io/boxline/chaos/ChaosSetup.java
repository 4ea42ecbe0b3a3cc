package io.boxline.chaos;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Admin;
import io.boxline.Boxline;
import io.boxline.GroupPolicy;
import io.boxline.Sequencing;
import io.boxline.SubscriptionSpec;
import io.boxline.jdbc.JdbcStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * Creates what a run needs before any child starts: the Boxline schema (migrated once here; the
 * children never migrate), the two topics (one per sequencing mode), the three subscriptions, the
 * tasks topic, the group policy, and the run's own tables.
 */
final class ChaosSetup {
  /** Check-ins every second, a member dead three intervals later. */
  static final GroupPolicy POLICY =
      GroupPolicy.DEFAULT
          .withMinCheckInInterval(Duration.ofSeconds(1))
          .withDeadlineMultiplier(3)
          .withReleaseGrace(Duration.ofSeconds(3));

  /** When a silent member counts as dead under {@link #POLICY} (groups of a few members). */
  static final Duration MEMBER_DEADLINE = Duration.ofSeconds(3);

  private ChaosSetup() {}

  /** A small pool of the parent's own, for setup, progress and the checker. */
  static HikariDataSource parentPool(ChaosDatabase db) {
    HikariConfig cfg = new HikariConfig();
    cfg.setJdbcUrl(db.url());
    cfg.setUsername(db.user());
    cfg.setPassword(db.password());
    cfg.setMaximumPoolSize(4);
    cfg.setMinimumIdle(0);
    cfg.setPoolName("chaos-parent");
    cfg.setConnectionTimeout(5_000);
    return new HikariDataSource(cfg);
  }

  static void create(HikariDataSource pool, ChaosDatabase db) throws SQLException {
    String schema = db.schema();
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA " + schema);
      String serial = db.serialKey();
      st.execute(
          "CREATE TABLE "
              + schema
              + ".chaos_order (order_id varchar(36) PRIMARY KEY,"
              + " producer int NOT NULL, run int NOT NULL, thread int NOT NULL,"
              + " step bigint NOT NULL, topic varchar(64) NOT NULL, ev_key varchar(64) NOT NULL,"
              + " events int NOT NULL, idem int NOT NULL, poison int NOT NULL,"
              + " task_id varchar(36))");
      st.execute(
          "CREATE TABLE "
              + schema
              + ".chaos_rolled_back (order_id varchar(36) NOT NULL,"
              + " events int NOT NULL)");
      st.execute(
          "CREATE TABLE "
              + schema
              + ".chaos_resend (n "
              + serial
              + ","
              + " order_id varchar(36) NOT NULL, sent_id varchar(36) NOT NULL,"
              + " returned_id varchar(36) NOT NULL, duplicate int NOT NULL)");
      for (String t : new String[] {"chaos_delivery", "chaos_effect"}) {
        st.execute(
            "CREATE TABLE "
                + schema
                + "."
                + t
                + " (n "
                + serial
                + ","
                + " event_id varchar(36) NOT NULL, member varchar(64) NOT NULL)");
      }
      st.execute(
          "CREATE TABLE "
              + schema
              + ".chaos_task_run (n "
              + serial
              + ","
              + " task_id varchar(36) NOT NULL, member varchar(64) NOT NULL)");
    }
    try (Boxline boxline =
        Boxline.builder()
            .store(JdbcStore.builder(pool).schema(schema).build())
            .instanceId("chaos-setup")
            .sequencer(false)
            .build()
            .start()) {
      Admin admin = boxline.admin();
      admin.createNamespace(ChaosNames.NAMESPACE);
      admin.createTopic(ChaosNames.ORDERS, ChaosNames.ORDERS_PARTITIONS, Sequencing.SEQUENCER);
      admin.createTopic(ChaosNames.ALERTS, ChaosNames.ALERTS_PARTITIONS, Sequencing.IN_TRANSACTION);
      for (String s : new String[] {ChaosNames.EFFECTS, ChaosNames.DELIVERIES, ChaosNames.RELAY}) {
        admin.createSubscription(SubscriptionSpec.of(s, ChaosNames.ORDERS, ChaosNames.ALERTS));
      }
      admin.setDefaultGroupPolicy(POLICY);
      boxline.tasks().blocked(); // creates the tasks topic and its subscription
    }
  }
}
