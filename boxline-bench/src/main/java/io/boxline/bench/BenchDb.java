package io.boxline.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A database of one workload's own (the soak, the group and failure workloads, K1, C1, S1), made
 * for one run and dropped at the end (also by a shutdown hook on Ctrl-C): on PostgreSQL a database
 * of its own ({@code bench_<workload>_<random>}, Boxline in its schema {@code boxline}), so that
 * pg_stat_database counts only the workload's traffic; on MariaDB a database (there a schema) of
 * that name, which holds Boxline's tables directly. Server settings are not touched.
 */
final class BenchDb implements AutoCloseable {
  private static final Pattern PG_URL =
      Pattern.compile("^(jdbc:postgresql://[^/?]*/)([^?]*)(\\?.*)?$");

  /** The database's name (on MariaDB also Boxline's schema). */
  final String name;

  /** The schema that holds Boxline's tables. */
  final String schema;

  /** The server's database the run was given (on PostgreSQL the maintenance database). */
  private final Db admin;

  /** Connections to this database. */
  private final Db db;

  private final List<HikariDataSource> pools = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final Thread hook;
  private volatile boolean dropped;

  private BenchDb(Db admin, String name) {
    this.admin = admin;
    this.name = name;
    if (postgres()) {
      Matcher m = PG_URL.matcher(admin.url);
      if (!m.matches()) {
        throw new IllegalArgumentException(
            "the soak needs a PostgreSQL URL of the form jdbc:postgresql://host:port/database,"
                + " got "
                + admin.url);
      }
      this.db =
          new Db(
              m.group(1) + name + (m.group(3) == null ? "" : m.group(3)),
              admin.user,
              admin.password);
      this.schema = GfKit.SCHEMA;
    } else {
      this.db = admin;
      this.schema = name;
    }
    this.hook = new Thread(this::dropQuietly, "bench-drop-" + name);
  }

  /** A group or failure workload's database, {@code bench_gf_<workload>_<random>}. */
  static BenchDb create(Run run, String workload) {
    return create(run.db(), "gf_" + workload);
  }

  /** Creates {@code bench_<workload>_<random>} on the run's server. */
  static BenchDb create(Db admin, String workload) {
    String name =
        "bench_" + workload + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    BenchDb db = new BenchDb(admin, name);
    admin.exec(db.postgres() ? "CREATE DATABASE " + name : admin.kind.createSchema(name));
    Runtime.getRuntime().addShutdownHook(db.hook);
    Bench.log("created database %s", name);
    return db;
  }

  boolean postgres() {
    return admin.kind instanceof PostgreSqlDatabase;
  }

  BenchDatabase kind() {
    return admin.kind;
  }

  /** A fixed-size HikariCP pool on this database (library defaults otherwise). */
  HikariDataSource pool(String poolName, int size) {
    return pool(poolName, size, null);
  }

  /**
   * A pool as {@link #pool(String, int)}, counted by {@code probe} (unless null) placed under the
   * pool, so the pool's validation pings are seen too.
   */
  HikariDataSource pool(String poolName, int size, Probe probe) {
    HikariDataSource ds = db.pool(poolName, size, probe == null ? null : probe.wrap(db.driver()));
    pools.add(ds);
    return ds;
  }

  /** This database's JDBC URL, user and password (for a process or server of its own). */
  Db db() {
    return db;
  }

  long queryLong(String sql) {
    return db.queryLong(sql);
  }

  /**
   * Autovacuum and autoanalyze runs so far on this database's tables (pg_stat_user_tables). The
   * query is a transaction of this database: read it outside measured windows.
   */
  long autovacuumRuns() {
    return queryLong(
        "SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0) FROM pg_stat_user_tables");
  }

  /** A connection on this database outside any pool (for the sampler). */
  Connection connect() throws SQLException {
    return db.connect();
  }

  /**
   * A connection on the server's database the run was given: on PostgreSQL its reads are not
   * counted in this database's pg_stat_database row.
   */
  Connection maintenance() throws SQLException {
    return admin.connect();
  }

  /**
   * The database's transaction counter: on PostgreSQL xact_commit + xact_rollback of this database
   * (read on a maintenance connection, so not counted here); on MariaDB the server's Questions
   * (statements clients sent, the whole server, this read included).
   */
  long transactions(Connection maintenance) {
    if (!postgres()) {
      return admin.counters(maintenance)[0];
    }
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

  /** What {@link #transactions} counts, per second. */
  String transactionsName() {
    return postgres()
        ? "transactions/s of the run's database (pg_stat_database)"
        : "Questions/s of the whole server (SHOW GLOBAL STATUS)";
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
      admin.exec(
          postgres()
              ? "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"
              : admin.kind.dropSchema(name));
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
