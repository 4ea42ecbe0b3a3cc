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
 * The soak's database, made for one run and dropped at the end (also by a shutdown hook on Ctrl-C):
 * on PostgreSQL a database of its own ({@code bench_soak_<random>}, Boxline in its schema {@code
 * boxline}), so that pg_stat_database counts only the run's traffic; on MariaDB a database (there a
 * schema) of that name, which holds Boxline's tables directly. Server settings are not touched.
 */
final class SoakDb implements AutoCloseable {
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

  private SoakDb(Db admin, String name) {
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

  /** Creates {@code bench_<workload>_<random>} on the run's server. */
  static SoakDb create(Db admin, String workload) {
    String name =
        "bench_" + workload + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    SoakDb db = new SoakDb(admin, name);
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
    HikariDataSource ds = db.pool(poolName, size, null);
    pools.add(ds);
    return ds;
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
  long serverCounter(Connection maintenance) throws SQLException {
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
    }
  }

  /** What {@link #serverCounter} counts, per second. */
  String serverCounterName() {
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
