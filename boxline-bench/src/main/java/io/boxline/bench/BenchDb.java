package io.boxline.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A PostgreSQL database of one workload's own (S1, the soak), {@code bench_<workload>_<random>}
 * with Boxline in its schema {@code boxline}, so that pg_stat_database counts only the workload's
 * traffic. Dropped at the end, also by a shutdown hook on Ctrl-C. Server settings are not touched.
 */
final class BenchDb implements AutoCloseable {
  private static final Pattern PG_URL =
      Pattern.compile("^(jdbc:postgresql://[^/?]*/)([^?]*)(\\?.*)?$");

  final String name;

  /** The schema that holds Boxline's tables. */
  final String schema = "boxline";

  /** The server's database the run was given, where this one is created and dropped. */
  private final Db admin;

  /** Connections to this database. */
  private final Db db;

  private final List<HikariDataSource> pools = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final Thread hook;
  private volatile boolean dropped;

  private BenchDb(Db admin, String name) {
    this.admin = admin;
    this.name = name;
    Matcher m = PG_URL.matcher(admin.url);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "need a URL of the form jdbc:postgresql://host:port/database, got " + admin.url);
    }
    String params = m.group(3) == null ? "" : m.group(3);
    this.db = new Db(m.group(1) + name + params, admin.user, admin.password);
    this.hook = new Thread(this::dropQuietly, "bench-drop-" + name);
  }

  /** Creates {@code bench_<workload>_<random>} on the run's server. */
  static BenchDb create(Db admin, String workload) {
    String name =
        "bench_" + workload + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    BenchDb db = new BenchDb(admin, name);
    admin.exec("CREATE DATABASE " + name);
    Runtime.getRuntime().addShutdownHook(db.hook);
    Bench.log("created database %s", name);
    return db;
  }

  /** A fixed-size HikariCP pool on this database (library defaults otherwise). */
  HikariDataSource pool(String poolName, int size) {
    HikariDataSource ds = db.pool(poolName, size, null);
    pools.add(ds);
    return ds;
  }

  /** This database's JDBC URL, user and password (for a process or server of its own). */
  Db db() {
    return db;
  }

  /** A connection on this database outside any pool (for the sampler). */
  Connection connect() throws SQLException {
    return db.connect();
  }

  private void dropQuietly() {
    if (dropped) {
      return;
    }
    dropped = true;
    for (HikariDataSource p : pools) {
      try {
        p.close();
      } catch (RuntimeException ignored) {
        // best effort
      }
    }
    try {
      admin.exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
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
    Bench.log("dropped database %s", name);
  }
}
