package io.boxline.bench;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;
import org.mariadb.jdbc.util.constants.ServerStatus;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * Counts and times what goes over JDBC, per calling thread kind (sequencer, consumer worker, ...)
 * and per statement. Wraps a {@link DataSource} with dynamic proxies:
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
  private static final Set<String> EXECUTES =
      Set.of(
          "execute",
          "executeQuery",
          "executeUpdate",
          "executeLargeUpdate",
          "executeBatch",
          "executeLargeBatch");

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

  // ------------------------------------------------------------------ proxies
  DataSource wrap(DataSource target) {
    return proxy(
        DataSource.class,
        (proxy, m, args) -> {
          if (m.getName().equals("getConnection")) {
            long t0 = System.nanoTime();
            Connection c = (Connection) call(target, m, args);
            record("borrow (getConnection)", System.nanoTime() - t0);
            return connection(c);
          }
          return call(target, m, args);
        });
  }

  /** A proxy of {@code type} whose calls go to {@code handler} (this and {@link CommitClock}). */
  static <T> T proxy(Class<T> type, InvocationHandler handler) {
    return type.cast(
        Proxy.newProxyInstance(Probe.class.getClassLoader(), new Class<?>[] {type}, handler));
  }

  /**
   * Whether the driver connection is inside a transaction (so that commit() or rollback() sends
   * something), or null when the driver cannot tell.
   */
  private static BooleanSupplier transactionState(Connection target) {
    try {
      if (target.isWrapperFor(BaseConnection.class)) {
        BaseConnection pg = target.unwrap(BaseConnection.class);
        return () -> pg.getTransactionState() != TransactionState.IDLE;
      }
    } catch (Exception | LinkageError e) {
      // not PostgreSQL
    }
    try {
      if (target.isWrapperFor(org.mariadb.jdbc.Connection.class)) {
        org.mariadb.jdbc.Connection maria = target.unwrap(org.mariadb.jdbc.Connection.class);
        return () -> (maria.getContext().getServerStatus() & ServerStatus.IN_TRANSACTION) != 0;
      }
    } catch (Exception | LinkageError e) {
      // not MariaDB
    }
    return null;
  }

  private Connection connection(Connection target) {
    BooleanSupplier inTransaction = transactionState(target);
    // MariaDB Connector/J sends "set autocommit=0/1" whenever the mode changes; PgJDBC sends
    // nothing for the mode itself (only the COMMIT that setAutoCommit(true) implies).
    boolean autoCommitRoundTrip;
    try {
      autoCommitRoundTrip = target.isWrapperFor(org.mariadb.jdbc.Connection.class);
    } catch (Exception | LinkageError e) {
      autoCommitRoundTrip = false;
    }
    boolean sendsAutoCommit = autoCommitRoundTrip;
    InvocationHandler h =
        (proxy, m, args) -> {
          String name = m.getName();
          switch (name) {
            case "createStatement":
              return statement(Statement.class, (Statement) call(target, m, args), null);
            case "prepareStatement":
              return statement(
                  PreparedStatement.class,
                  (PreparedStatement) call(target, m, args),
                  (String) args[0]);
            case "prepareCall":
              return statement(
                  CallableStatement.class,
                  (CallableStatement) call(target, m, args),
                  (String) args[0]);
            case "commit":
            case "rollback":
              if (args == null || args.length == 0) {
                boolean open = inTransaction == null || inTransaction.getAsBoolean();
                long t0 = System.nanoTime();
                Object r = call(target, m, args);
                if (open) {
                  record(name.toUpperCase(), System.nanoTime() - t0);
                }
                return r;
              }
              return call(target, m, args);
            case "setAutoCommit":
              {
                if (sendsAutoCommit) {
                  boolean change = !Boolean.valueOf(target.getAutoCommit()).equals(args[0]);
                  long t0 = System.nanoTime();
                  Object r = call(target, m, args);
                  if (change) {
                    record(
                        Boolean.TRUE.equals(args[0])
                            ? "set autocommit=1 (commits; by setAutoCommit(true))"
                            : "set autocommit=0 (by setAutoCommit(false))",
                        System.nanoTime() - t0);
                  }
                  return r;
                }
                boolean open =
                    Boolean.TRUE.equals(args[0])
                        && !target.getAutoCommit()
                        && inTransaction != null
                        && inTransaction.getAsBoolean();
                long t0 = System.nanoTime();
                Object r = call(target, m, args);
                if (open) {
                  record("COMMIT (by setAutoCommit(true))", System.nanoTime() - t0);
                }
                return r;
              }
            case "isValid":
              {
                long t0 = System.nanoTime();
                Object r = call(target, m, args);
                record("validation ping (isValid)", System.nanoTime() - t0);
                return r;
              }
            default:
              return call(target, m, args);
          }
        };
    return proxy(Connection.class, h);
  }

  private <S extends Statement> S statement(Class<S> type, S target, String sql) {
    List<String> batch = new ArrayList<>();
    InvocationHandler h =
        (proxy, m, args) -> {
          String name = m.getName();
          if (name.equals("addBatch")) {
            batch.add(args == null || args.length == 0 ? sql : (String) args[0]);
          } else if (name.equals("clearBatch")) {
            batch.clear();
          }
          if (!EXECUTES.contains(name)) {
            return call(target, m, args);
          }
          String text =
              sql != null ? sql : (args != null && args.length > 0 ? (String) args[0] : null);
          long t0 = System.nanoTime();
          Object r = call(target, m, args);
          long d = System.nanoTime() - t0;
          if (name.startsWith("executeBatch") || name.startsWith("executeLargeBatch")) {
            record("batch: " + label(batch.isEmpty() ? text : batch.get(0)), d, batch.size());
            batch.clear();
          } else {
            record(label(text), d);
          }
          return r;
        };
    return proxy(type, h);
  }

  /** Calls {@code m} on {@code target}, throwing what it threw. */
  static Object call(Object target, Method m, Object[] args) throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
