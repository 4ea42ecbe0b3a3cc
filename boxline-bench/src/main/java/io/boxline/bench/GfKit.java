package io.boxline.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * What the group (G1–G3) and failure (F1, F2) workloads share: a PostgreSQL database of its own per
 * workload (so pg_stat_database counts only the workload's traffic), and their events.
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

  private GfKit() {}

  // ------------------------------------------------------------------ a database per workload
  /**
   * A database created for one workload and dropped (WITH (FORCE)) on close, also by a shutdown
   * hook on Ctrl-C. Server settings are not touched.
   */
  static final class BenchDb implements AutoCloseable {
    final String name;

    /** The run's database: the server's maintenance database ("postgres"). */
    private final Db admin;

    /** This one. */
    private final Db db;

    private final List<HikariDataSource> pools = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Thread hook;
    private volatile boolean dropped;

    private BenchDb(Run run, String name) {
      this.name = name;
      this.admin = run.db();
      this.db =
          new Db(
              "jdbc:postgresql://" + run.o().get(Db.HOST) + "/" + name, admin.user, admin.password);
      this.hook = new Thread(this::dropQuietly, "bench-drop-" + name);
    }

    static BenchDb create(Run run, String workload) {
      String name =
          "bench_gf_"
              + workload
              + "_"
              + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
      BenchDb db = new BenchDb(run, name);
      db.admin.exec("CREATE DATABASE " + name);
      Runtime.getRuntime().addShutdownHook(db.hook);
      Bench.log("created database %s", name);
      return db;
    }

    /**
     * A HikariCP pool on this database with the library defaults except the size (fixed: minimum
     * idle = maximum), like the W1–W3 pools; optionally counted by a {@link Probe} placed under the
     * pool, so the pool's validation pings are seen too.
     */
    HikariDataSource pool(String poolName, int size, Probe probe) {
      HikariDataSource ds =
          db.pool(poolName, size, probe == null ? db.driver() : probe.wrap(db.driver()));
      pools.add(ds);
      return ds;
    }

    /** This database's JDBC URL, user and password (for a process or server of its own). */
    Db db() {
      return db;
    }

    /** A connection on this database outside any pool (for monitoring queries). */
    Connection connect() throws SQLException {
      return db.connect();
    }

    /** A connection on the maintenance database, whose reads are not counted in this one. */
    Connection maintenance() throws SQLException {
      return admin.connect();
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

  /** Event {@code index} of these workloads. */
  static OutgoingEvent event(TopicName topic, long index, String key) {
    return Payloads.event(topic, id(index), "bench.event", key, payload(index));
  }

  /** A Boxline on a benchmark database's pool, in {@link #SCHEMA}, to be built and started. */
  static Boxline.Builder builder(DataSource pool, String instanceId) {
    return Boxline.builder()
        .store(JdbcStore.builder(pool).schema(SCHEMA).build())
        .instanceId(instanceId);
  }

  /**
   * A started Boxline with the namespace "bench" and {@code topic} (unless null), once it leads the
   * sequencer.
   */
  static Boxline start(Boxline.Builder builder, TopicName topic, int partitions)
      throws InterruptedException {
    Boxline boxline = builder.build().start();
    boxline.admin().createNamespace(NamespacePath.of("bench"));
    if (topic != null) {
      boxline.admin().createTopic(topic, partitions);
    }
    Bench.awaitLeader(boxline);
    return boxline;
  }

  /** The nanoseconds in milliseconds with one decimal. */
  static String ms(long nanos) {
    return Stats.f("%.1f", nanos / 1e6);
  }
}
