package io.boxline.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Shared plumbing of {@link GroupBench} and {@link FailureBench}: a PostgreSQL database of its own
 * per workload (so pg_stat_database counts only the workload's traffic), pools, counters, the
 * machine's load, Markdown tables, and a correctness failure type.
 */
final class GfKit {
  /** Boxline's schema inside each benchmark database. */
  static final String SCHEMA = "boxline";

  /** The Boxline tables F2 watches. */
  static final List<String> TABLES =
      List.of(
          "outbox",
          "log",
          "cursor",
          "partition",
          "parked",
          "sequencer_lease",
          "member",
          "lease",
          "idempotency",
          "inbox");

  /** Most significant bits of every event id written by these workloads; the low bits index it. */
  static final long ID_MAGIC = 0x0B0C6F00_0000_4000L;

  private static final List<Logger> KEEP = new ArrayList<>();
  static final AtomicLong WARNINGS = new AtomicLong();

  /** Warnings whose cause chain mentions a PostgreSQL deadlock. */
  static final AtomicLong DEADLOCKS = new AtomicLong();

  /** Warnings about partitions lost (taken over or fenced). */
  static final AtomicLong LOST_WARNINGS = new AtomicLong();

  static final List<String> FIRST_WARNINGS = new CopyOnWriteArrayList<>();

  private GfKit() {}

  /** A correctness check failed: the run is invalid. */
  static final class CheckFailed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CheckFailed(String message) {
      super(message);
    }
  }

  static void check(boolean ok, String message) {
    if (!ok) {
      throw new CheckFailed(message);
    }
  }

  // ------------------------------------------------------------------ options
  /** {@code --name=value} options after the workload list. */
  static final class Options {
    final Map<String, String> values = new LinkedHashMap<>();

    static Options parse(String[] args, int from) {
      Options o = new Options();
      for (int i = from; i < args.length; i++) {
        String a = args[i];
        if (!a.startsWith("--") || !a.contains("=")) {
          throw new IllegalArgumentException("expected --name=value, got " + a);
        }
        o.values.put(a.substring(2, a.indexOf('=')), a.substring(a.indexOf('=') + 1));
      }
      return o;
    }

    String get(String k, String def) {
      return values.getOrDefault(k, def);
    }

    int getInt(String k, int def) {
      return Integer.parseInt(get(k, Integer.toString(def)));
    }

    double getDouble(String k, double def) {
      return Double.parseDouble(get(k, Double.toString(def)));
    }

    boolean getBool(String k, boolean def) {
      return Boolean.parseBoolean(get(k, Boolean.toString(def)));
    }

    int[] ints(String k, String def) {
      return Arrays.stream(get(k, def).split(","))
          .filter(x -> !x.isBlank())
          .mapToInt(x -> Integer.parseInt(x.trim()))
          .toArray();
    }

    String host() {
      return get("host", "127.0.0.1:5432");
    }

    String user() {
      return get("user", "postgres");
    }

    String password() {
      return get("password", "");
    }
  }

  // ------------------------------------------------------------------ a database per workload
  /**
   * A database created for one workload and dropped (WITH (FORCE)) on close, also by a shutdown
   * hook on Ctrl-C. Server settings are not touched.
   */
  static final class BenchDb implements AutoCloseable {
    final String name;
    final String url;
    private final Options o;
    private final List<HikariDataSource> pools = new CopyOnWriteArrayList<>();
    private final Thread hook;
    private volatile boolean dropped;

    private BenchDb(Options o, String name) {
      this.o = o;
      this.name = name;
      this.url = "jdbc:postgresql://" + o.host() + "/" + name;
      this.hook = new Thread(this::dropQuietly, "bench-drop-" + name);
    }

    static BenchDb create(Options o, String workload) {
      String name =
          "bench_gf_"
              + workload
              + "_"
              + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
      BenchDb db = new BenchDb(o, name);
      db.admin("CREATE DATABASE " + name);
      Runtime.getRuntime().addShutdownHook(db.hook);
      log("created database %s", name);
      return db;
    }

    /** Runs statements on the maintenance database ("postgres"), not on this one. */
    void admin(String... sql) {
      try (Connection c =
              DriverManager.getConnection(
                  "jdbc:postgresql://" + o.host() + "/postgres", o.user(), o.password());
          Statement st = c.createStatement()) {
        for (String s : sql) {
          st.execute(s);
        }
      } catch (SQLException e) {
        throw new IllegalStateException(String.join("; ", sql) + ": " + e.getMessage(), e);
      }
    }

    /** A plain driver data source on this database. */
    DataSource driver() {
      PGSimpleDataSource ds = new PGSimpleDataSource();
      ds.setURL(url);
      ds.setUser(o.user());
      ds.setPassword(o.password());
      return ds;
    }

    /**
     * A HikariCP pool on this database with the library defaults except the size (fixed: minimum
     * idle = maximum), like the W1–W3 pools; optionally counted by a {@link Probe} placed under the
     * pool, so the pool's validation pings are seen too.
     */
    HikariDataSource pool(String poolName, int size, Probe probe) {
      HikariConfig c = new HikariConfig();
      c.setDataSource(probe == null ? driver() : probe.wrap(driver()));
      c.setPoolName(poolName);
      c.setMaximumPoolSize(size);
      c.setConnectionTimeout(30_000);
      HikariDataSource ds = new HikariDataSource(c);
      pools.add(ds);
      return ds;
    }

    /** A connection on this database outside any pool (for monitoring queries). */
    Connection connect() throws SQLException {
      return DriverManager.getConnection(url, o.user(), o.password());
    }

    /**
     * xact_commit + xact_rollback of this database, read from pg_stat_database over a connection to
     * the maintenance database, so the read itself is not counted here.
     */
    long transactions(Connection maintenance) {
      try (PreparedStatement ps =
          maintenance.prepareStatement(
              "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = ?")) {
        ps.setString(1, name);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      } catch (SQLException e) {
        throw new IllegalStateException("pg_stat_database: " + e.getMessage(), e);
      }
    }

    static Connection maintenanceOf(Options o) throws SQLException {
      return DriverManager.getConnection(
          "jdbc:postgresql://" + o.host() + "/postgres", o.user(), o.password());
    }

    Connection maintenance() throws SQLException {
      return DriverManager.getConnection(
          "jdbc:postgresql://" + o.host() + "/postgres", o.user(), o.password());
    }

    long queryLong(String sql) {
      try (Connection c = connect();
          Statement st = c.createStatement();
          ResultSet rs = st.executeQuery(sql)) {
        rs.next();
        return rs.getLong(1);
      } catch (SQLException e) {
        throw new IllegalStateException(sql + ": " + e.getMessage(), e);
      }
    }

    /**
     * Autovacuum and autoanalyze runs so far on this database's tables (pg_stat_user_tables). The
     * query is a transaction of this database: read it outside measured windows.
     */
    long autovacuumRuns() {
      return queryLong(
          "SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0) FROM pg_stat_user_tables");
    }

    void closePools() {
      for (HikariDataSource p : pools) {
        try {
          p.close();
        } catch (RuntimeException ignored) {
          // best effort
        }
      }
    }

    private void dropQuietly() {
      if (dropped) {
        return;
      }
      dropped = true;
      closePools();
      try {
        admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
      } catch (RuntimeException e) {
        System.err.println("could not drop database " + name + ": " + e.getMessage());
      }
    }

    @Override
    public void close() {
      dropQuietly();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException ignored) {
        // shutting down
      }
      log("dropped database %s", name);
    }
  }

  // ------------------------------------------------------------------ events
  static UUID id(long index) {
    return new UUID(ID_MAGIC, index);
  }

  /** The index carried by an event id, or -1 when it is not one of ours. */
  static long index(UUID id) {
    return id.getMostSignificantBits() == ID_MAGIC ? id.getLeastSignificantBits() : -1;
  }

  static byte[] payload(long index) {
    return ("{\"n\":" + index + ",\"pad\":\"" + "x".repeat(150) + "\"}")
        .getBytes(StandardCharsets.UTF_8);
  }

  /** Waits until this instance leads the sequencer (producers then take the in-process path). */
  static void awaitLeader(Boxline boxline) throws InterruptedException {
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (!boxline.stats().sequencerLeader()) {
      check(System.nanoTime() < deadline, "Boxline did not become sequencer leader within 20 s");
      Thread.sleep(5);
    }
  }

  // ------------------------------------------------------------------ machine, logs, numbers
  /** "1-, 5-, 15-minute load average" from /proc/loadavg. */
  static String load() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
      return f[0] + " / " + f[1] + " / " + f[2];
    } catch (IOException | RuntimeException e) {
      return "?";
    }
  }

  static double load1() {
    try {
      return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
  }

  static void log(String format, Object... args) {
    System.out.println(
        LocalDateTime.now(ZoneOffset.UTC).toLocalTime().withNano(0) + " " + f(format, args));
  }

  static String f(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }

  /** Nearest-rank percentile of sorted values, p in (0, 100]. */
  static long percentile(long[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }

  static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    int n = v.length;
    return n == 0 ? Double.NaN : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  static double min(double[] v) {
    return Arrays.stream(v).min().orElse(Double.NaN);
  }

  static double max(double[] v) {
    return Arrays.stream(v).max().orElse(Double.NaN);
  }

  static String ms(long nanos) {
    return f("%.1f", nanos / 1e6);
  }

  /**
   * Boxline logs through System.Logger (java.util.logging here). INFO is silenced; warnings are
   * counted (lost partitions, dead letters …), the first few kept for the report, and printed only
   * when {@code verbose}.
   */
  static void quietLogs(boolean verbose) {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    Logger boxline = Logger.getLogger("io.boxline");
    boxline.setLevel(Level.WARNING);
    boxline.setUseParentHandlers(verbose);
    boxline.addHandler(
        new Handler() {
          @Override
          public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
              WARNINGS.incrementAndGet();
              for (Throwable t = r.getThrown(); t != null; t = t.getCause()) {
                if (t.getMessage() != null && t.getMessage().contains("deadlock detected")) {
                  DEADLOCKS.incrementAndGet();
                  break;
                }
              }
              if (r.getMessage() != null && r.getMessage().contains(" lost ")) {
                LOST_WARNINGS.incrementAndGet();
              }
              if (FIRST_WARNINGS.size() < 20) {
                String m = r.getMessage();
                if (r.getParameters() != null) {
                  m = java.text.MessageFormat.format(m, r.getParameters());
                }
                FIRST_WARNINGS.add(m);
              }
            }
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        });
    KEEP.add(boxline);
    Logger hikari = Logger.getLogger("com.zaxxer.hikari");
    hikari.setLevel(Level.WARNING);
    KEEP.add(hikari);
  }

  /** Where a class was loaded from and when that jar was written (which engine build ran). */
  static String jar(Class<?> type) {
    try {
      Path p = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (Files.isDirectory(p)) {
        return p.toString();
      }
      byte[] d = java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p));
      StringBuilder hex = new StringBuilder();
      for (int i = 0; i < 6; i++) {
        hex.append(String.format("%02x", d[i]));
      }
      return p.getFileName()
          + " ("
          + Files.getLastModifiedTime(p)
              .toInstant()
              .truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
          + ", sha256 "
          + hex
          + ")";
    } catch (Exception e) {
      return "?";
    }
  }

  static String header(String title, String[] args) {
    return "# "
        + title
        + "\n\n"
        + "- date (UTC): "
        + LocalDateTime.now(ZoneOffset.UTC).withNano(0)
        + "\n- arguments: "
        + String.join(" ", args)
        + "\n- cores: "
        + Runtime.getRuntime().availableProcessors()
        + ", load average at start (1/5/15 min): "
        + load()
        + "\n- Java "
        + System.getProperty("java.runtime.version")
        + "; boxline-core "
        + jar(Boxline.class)
        + "; boxline-jdbc "
        + jar(io.boxline.jdbc.JdbcStore.class)
        + "\n\n";
  }

  /** Writes the report to boxline-bench/target/gf-&lt;name&gt;-&lt;time&gt;.md. */
  static Path write(String name, String report) throws IOException {
    Path dir = Path.of("target");
    if (Files.isDirectory(Path.of("boxline-bench", "target"))) {
      dir = Path.of("boxline-bench", "target");
    }
    Files.createDirectories(dir);
    String stamp =
        LocalDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
    Path file = dir.resolve("gf-" + name + "-" + stamp + ".md");
    Files.writeString(file, report);
    return file;
  }
}
