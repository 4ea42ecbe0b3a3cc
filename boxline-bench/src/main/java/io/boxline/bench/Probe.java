package io.boxline.bench;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import net.ttddyy.dsproxy.listener.MethodExecutionContext;
import net.ttddyy.dsproxy.support.ProxyDataSourceBuilder;
import org.mariadb.jdbc.util.constants.ServerStatus;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * Counts and times what goes over JDBC, per calling thread kind (sequencer, consumer worker, ...)
 * and per statement. Wraps a {@link DataSource} with datasource-proxy:
 *
 * <ul>
 *   <li>below the pool (the pool's own data source): every round trip the pool makes is seen,
 *       including its connection validation ({@code isValid}) on borrow; used by W3 to count
 *       statements exactly;
 *   <li>above the pool (the data source handed to Boxline): also times {@code getConnection}; used
 *       by the W2 trace to show where latency goes.
 * </ul>
 *
 * <p>What counts as one statement: one {@code execute*} call (a JDBC batch counts its entries), one
 * COMMIT or ROLLBACK that the driver actually sends (it sends none when no transaction is open),
 * one validation ping. BEGIN is not counted: the driver sends it in the same message as the first
 * statement of a transaction.
 */
final class Probe {
  /** Durations of one (thread kind, operation). */
  static final class Series {
    private long[] values = new long[64];
    private int size;
    private long count;

    synchronized void add(long nanos) {
      count++;
      if (size < 4_000_000) {
        if (size == values.length) {
          values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = nanos;
      }
    }

    synchronized long count() {
      return count;
    }

    synchronized Series copy() {
      Series c = new Series();
      c.values = Arrays.copyOf(values, Math.max(size, 1));
      c.size = size;
      c.count = count;
      return c;
    }

    synchronized long[] sorted() {
      long[] v = Arrays.copyOf(values, size);
      Arrays.sort(v);
      return v;
    }
  }

  private final Map<String, Series> series = new ConcurrentHashMap<>();
  private final String schema;
  private volatile boolean enabled = true;

  /**
   * @param schema removed from statement labels so they read like the query files
   */
  Probe(String schema) {
    this.schema = schema;
  }

  void enabled(boolean on) {
    enabled = on;
  }

  void reset() {
    series.clear();
  }

  /** A frozen copy: "thread kind | operation" → its series. */
  Map<String, Series> snapshot() {
    Map<String, Series> copy = new TreeMap<>();
    series.forEach((k, v) -> copy.put(k, v.copy()));
    return copy;
  }

  long total(String kindPrefix) {
    long n = 0;
    for (Map.Entry<String, Series> e : series.entrySet()) {
      if (e.getKey().startsWith(kindPrefix)) {
        n += e.getValue().count();
      }
    }
    return n;
  }

  /** Statements as defined in the class comment: everything except connection borrows. */
  long statements() {
    long n = 0;
    for (Map.Entry<String, Series> e : series.entrySet()) {
      if (!e.getKey().endsWith("| borrow (getConnection)")) {
        n += e.getValue().count();
      }
    }
    return n;
  }

  private static final boolean LOG = System.getenv("BENCH_PROBE_LOG") != null;

  private void record(String op, long nanos) {
    if (!enabled) {
      return;
    }
    String key = threadKind() + " | " + op;
    if (LOG) {
      System.out.println(
          java.time.LocalTime.now() + " [" + Thread.currentThread().getName() + "] " + op);
    }
    series.computeIfAbsent(key, k -> new Series()).add(nanos);
  }

  private void record(String op, long nanos, int times) {
    for (int i = 0; i < times; i++) {
      record(op, i == 0 ? nanos : 0);
    }
  }

  static String threadKind() {
    String n = Thread.currentThread().getName();
    if (n.startsWith("boxline-sequencer")) {
      return "sequencer";
    }
    if (n.startsWith("boxline-worker")) {
      return "consumer worker";
    }
    if (n.startsWith("boxline-consumer")) {
      return "consumer dispatcher";
    }
    if (n.startsWith("boxline-listener")) {
      return "listener";
    }
    if (n.startsWith("boxline-group")) {
      return "consumer group check-in";
    }
    if (n.startsWith("boxline-")) {
      int dash = n.indexOf('-', "boxline-".length());
      return "boxline " + (dash < 0 ? n.substring(8) : n.substring(8, dash));
    }
    if (n.contains("HikariPool") || n.contains("housekeeper") || n.contains("connection adder")) {
      return "pool";
    }
    if (n.startsWith("producer")) {
      return "producer";
    }
    if (n.endsWith(".main()") || n.equals("main")) {
      return "bench main thread";
    }
    return "other (" + n.replaceAll("[0-9]+", "#") + ")";
  }

  String label(String sql) {
    if (sql == null) {
      return "?";
    }
    String s = sql.replace(schema + ".", "").replaceAll("\\s+", " ").trim();
    return s.length() > 70 ? s.substring(0, 70) + "…" : s;
  }

  // ------------------------------------------------------------------ the proxy (datasource-proxy)
  /** The call's start and what it counts as, kept on the call between its before and after. */
  private record Started(String op, long nanos) {}

  private static final String STARTED = "probe.started";

  DataSource wrap(DataSource target) {
    return ProxyDataSourceBuilder.create("probe", target)
        .beforeMethod(
            call -> {
              String op = operation(call);
              if (op != null) {
                call.addCustomValue(STARTED, new Started(op, System.nanoTime()));
              }
            })
        .afterMethod(
            call -> {
              Started st = call.getCustomValue(STARTED, Started.class);
              if (st != null) {
                record(st.op(), System.nanoTime() - st.nanos());
              }
            })
        .beforeQuery(
            (info, queries) -> info.addCustomValue(STARTED, new Started(null, System.nanoTime())))
        .afterQuery(
            (info, queries) -> {
              long d = System.nanoTime() - info.getCustomValue(STARTED, Started.class).nanos();
              String sql = queries.isEmpty() ? null : queries.get(0).getQuery();
              if (info.isBatch()) {
                record("batch: " + label(sql), d, info.getBatchSize());
              } else {
                record(label(sql), d);
              }
            })
        .build();
  }

  /**
   * What a method call counts as (statements are counted by the query listener), decided before the
   * call: a commit or rollback only when a transaction is open (the driver sends nothing
   * otherwise), setAutoCommit only where it makes a round trip; null for anything else.
   */
  private static String operation(MethodExecutionContext call) {
    String name = call.getMethod().getName();
    Object[] args = call.getMethodArgs();
    if (call.getTarget() instanceof DataSource) {
      return name.equals("getConnection") ? "borrow (getConnection)" : null;
    }
    if (!(call.getTarget() instanceof Connection c)) {
      return null;
    }
    try {
      switch (name) {
        case "isValid":
          return "validation ping (isValid)";
        case "commit":
        case "rollback":
          Boolean open = inTransaction(c);
          return (args == null || args.length == 0) && (open == null || open)
              ? name.toUpperCase()
              : null;
        case "setAutoCommit":
          boolean on = Boolean.TRUE.equals(args[0]);
          if (c.isWrapperFor(org.mariadb.jdbc.Connection.class)) {
            // MariaDB Connector/J sends "set autocommit=0/1" whenever the mode changes.
            return c.getAutoCommit() == on
                ? null
                : on
                    ? "set autocommit=1 (commits; by setAutoCommit(true))"
                    : "set autocommit=0 (by setAutoCommit(false))";
          }
          // PgJDBC sends nothing for the mode itself, only the COMMIT that it implies.
          return on && !c.getAutoCommit() && Boolean.TRUE.equals(inTransaction(c))
              ? "COMMIT (by setAutoCommit(true))"
              : null;
        default:
          return null;
      }
    } catch (SQLException e) {
      return null;
    }
  }

  /**
   * Whether the driver connection is inside a transaction (so that commit() or rollback() sends
   * something), or null when the driver cannot tell.
   */
  private static Boolean inTransaction(Connection c) {
    try {
      if (c.isWrapperFor(BaseConnection.class)) {
        return c.unwrap(BaseConnection.class).getTransactionState() != TransactionState.IDLE;
      }
      if (c.isWrapperFor(org.mariadb.jdbc.Connection.class)) {
        org.mariadb.jdbc.Connection maria = c.unwrap(org.mariadb.jdbc.Connection.class);
        return (maria.getContext().getServerStatus() & ServerStatus.IN_TRANSACTION) != 0;
      }
    } catch (Exception | LinkageError e) {
      // neither driver
    }
    return null;
  }
}
