package io.boxline.bench;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import net.ttddyy.dsproxy.listener.MethodExecutionContext;
import net.ttddyy.dsproxy.support.ProxyDataSourceBuilder;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * W3's exact statement count, per calling thread kind (sequencer, consumer worker, ...) and per
 * statement, through datasource-proxy placed below the pool, so the pool's validation pings are
 * seen too. It counts what reaches the server: one {@code execute*} call (a JDBC batch counts its
 * entries), one COMMIT or ROLLBACK that the driver actually sends (it sends none when no
 * transaction is open), one validation ping. BEGIN is not counted: the driver sends it in the same
 * message as the first statement of a transaction.
 */
final class Probe {
  private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();
  private final String schema;

  /**
   * @param schema removed from statement labels so they read like the query files
   */
  Probe(String schema) {
    this.schema = schema;
  }

  void reset() {
    counts.clear();
  }

  /** A frozen copy: "thread kind | operation" → how many. */
  Map<String, Long> snapshot() {
    Map<String, Long> copy = new TreeMap<>();
    counts.forEach((k, v) -> copy.put(k, v.sum()));
    return copy;
  }

  private void record(String op, int times) {
    counts.computeIfAbsent(threadKind() + " | " + op, k -> new LongAdder()).add(times);
  }

  static String threadKind() {
    String n = Thread.currentThread().getName();
    if (n.startsWith("boxline-")) {
      int dash = n.indexOf('-', "boxline-".length());
      return "boxline " + (dash < 0 ? n.substring(8) : n.substring(8, dash));
    }
    if (n.contains("HikariPool") || n.contains("housekeeper") || n.contains("connection adder")) {
      return "pool";
    }
    return n.endsWith(".main()") || n.equals("main")
        ? "bench main thread"
        : "other (" + n.replaceAll("[0-9]+", "#") + ")";
  }

  private String label(String sql) {
    if (sql == null) {
      return "?";
    }
    String s = sql.replace(schema + ".", "").replaceAll("\\s+", " ").trim();
    return s.length() > 70 ? s.substring(0, 70) + "…" : s;
  }

  private static final String COUNTS = "probe.counts";

  DataSource wrap(DataSource target) {
    return ProxyDataSourceBuilder.create("probe", target)
        // Decided before the call: after a commit the transaction is closed.
        .beforeMethod(
            call -> {
              String op = operation(call);
              if (op != null) {
                call.addCustomValue(COUNTS, op);
              }
            })
        .afterMethod(
            call -> {
              String op = call.getCustomValue(COUNTS, String.class);
              if (op != null) {
                record(op, 1);
              }
            })
        .afterQuery(
            (info, queries) -> {
              String sql = label(queries.isEmpty() ? null : queries.get(0).getQuery());
              if (info.isBatch()) {
                record("batch: " + sql, info.getBatchSize());
              } else {
                record(sql, 1);
              }
            })
        .build();
  }

  /**
   * What a connection method counts as (statements are counted by the query listener): a commit or
   * rollback only when a transaction is open, setAutoCommit(true) only where it commits one.
   */
  private static String operation(MethodExecutionContext call) {
    if (!(call.getTarget() instanceof Connection c)) {
      return null;
    }
    String name = call.getMethod().getName();
    Object[] args = call.getMethodArgs();
    try {
      return switch (name) {
        case "isValid" -> "validation ping (isValid)";
        case "commit", "rollback" ->
            (args == null || args.length == 0) && inTransaction(c) ? name.toUpperCase() : null;
        // PgJDBC sends nothing for the mode itself, only the COMMIT that it implies.
        case "setAutoCommit" ->
            Boolean.TRUE.equals(args[0]) && !c.getAutoCommit() && inTransaction(c)
                ? "COMMIT (by setAutoCommit(true))"
                : null;
        default -> null;
      };
    } catch (SQLException e) {
      return null;
    }
  }

  /** Whether the driver connection is inside a transaction (so that commit() sends something). */
  private static boolean inTransaction(Connection c) throws SQLException {
    if (c.isWrapperFor(BaseConnection.class)) {
      return c.unwrap(BaseConnection.class).getTransactionState() != TransactionState.IDLE;
    }
    return true;
  }
}
