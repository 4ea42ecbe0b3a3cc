package io.boxline.jdbc;

import io.boxline.Names;
import io.boxline.StoreException;
import io.boxline.ValidationException;
import io.boxline.jdbc.internal.H2Dialect;
import io.boxline.jdbc.internal.MariaDbDialect;
import io.boxline.jdbc.internal.PostgresDialect;
import io.boxline.jdbc.internal.SqlScript;
import io.boxline.jdbc.internal.SqlStore;
import io.boxline.spi.Store;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * The JDBC {@link Store}: detects the database from the connection and picks its dialect.
 *
 * <pre>{@code
 * Store store = JdbcStore.builder(dataSource).schema("boxline").tablePrefix("").build();
 * }</pre>
 *
 * <p>The data source should be a pool. Boxline holds one of its connections permanently for
 * wake-ups (PostgreSQL LISTEN; on MariaDB/MySQL and H2 the wake-up poll, plus one for the sequencer
 * candidate) and borrows others briefly for the sequencer and each consumer worker.
 */
public final class JdbcStore {
  /** Default schema that holds Boxline's tables. */
  public static final String DEFAULT_SCHEMA = "boxline";

  private JdbcStore() {}

  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  /**
   * The DDL that {@code migrate()} would apply to an empty schema, for teams that run Flyway or
   * Liquibase.
   */
  public static String exportDdl(Database database, String schema, String tablePrefix) {
    Names.requireSchema(schema);
    Names.requirePrefix(tablePrefix);
    switch (database) {
      case POSTGRESQL:
        return SqlScript.exportPostgres(schema, tablePrefix);
      case MARIADB:
      case MYSQL:
        return SqlScript.exportMariaDb(schema, tablePrefix);
      case H2:
        return SqlScript.exportH2(schema, tablePrefix);
      default:
        throw new ValidationException(database + " is not supported yet");
    }
  }

  /** Databases Boxline has a dialect for. */
  public enum Database {
    POSTGRESQL,
    /** MariaDB 10.6 or newer; the schema is a MariaDB database. */
    MARIADB,
    /** MySQL 8.0 or newer: the same dialect and DDL as MariaDB. */
    MYSQL,
    /** H2 2.2.224 or newer, in memory or file mode (embedded or through an H2 server). */
    H2
  }

  private static final Pattern H2_VERSION = Pattern.compile("^(\\d+)\\.(\\d+)\\.(\\d+)");

  private static final Pattern VERSION = Pattern.compile("(\\d+)\\.(\\d+)");

  /** Settings of a {@link JdbcStore}. */
  public static final class Builder {
    private final DataSource dataSource;
    private String schema = DEFAULT_SCHEMA;
    private String tablePrefix = "";
    private boolean vacuumWhenAutovacuumOff = true;
    private int outboxVacuumEvery = PostgresDialect.DEFAULT_OUTBOX_VACUUM_EVERY;
    private Duration longTransactionWarning = PostgresDialect.DEFAULT_LONG_TRANSACTION_WARNING;
    private Duration fastestWakeupPoll = Duration.ofMillis(10);
    private Duration slowestWakeupPoll = Duration.ofSeconds(1);
    private Duration logSegmentWidth;
    private java.util.List<DataSource> readReplicas = java.util.List.of();
    private Duration replicaWait = Duration.ofMillis(100);

    private Builder(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /**
     * Schema holding Boxline's tables (default {@value JdbcStore#DEFAULT_SCHEMA}); created by
     * {@code migrate()} if missing.
     */
    public Builder schema(String schema) {
      this.schema = Names.requireSchema(schema);
      return this;
    }

    /** Prefix for every table name (default none), e.g. {@code bx_}. */
    public Builder tablePrefix(String prefix) {
      this.tablePrefix = Names.requirePrefix(prefix);
      return this;
    }

    /**
     * Whether the retention loop (which runs on one instance) vacuums Boxline's tables after each
     * run when the server's {@code autovacuum} is off (default true). Without any vacuum the
     * outbox, the log and the coordination tables grow without bound; turn this off only if you
     * vacuum them yourself. Only the tables' owner (or a superuser, or on PostgreSQL 17+ a user
     * with the MAINTAIN privilege) may vacuum them: for any other user the server skips them, and
     * Boxline logs a warning once and goes on.
     */
    public Builder vacuumWhenAutovacuumOff(boolean vacuum) {
      this.vacuumWhenAutovacuumOff = vacuum;
      return this;
    }

    /**
     * PostgreSQL only: the sequencer vacuums the outbox after this many events (default 4,096; 0:
     * never). Each batch scans the outbox's primary key from its start, and the index keeps the
     * entries of sequenced (deleted) rows until a vacuum, so without it every batch gets slower
     * until autovacuum comes by (once a minute at best). One such vacuum costs about 1 µs per
     * event; the table owner must run it (anyone else gets a warning in the log, once, and counts a
     * failure in {@code StoreStats.outboxVacuumFailures()}).
     */
    public Builder outboxVacuumEvery(int events) {
      if (events < 0) {
        throw new ValidationException(
            "outboxVacuumEvery must be 0 (never) or a number of events, not " + events);
      }
      this.outboxVacuumEvery = events;
      return this;
    }

    /**
     * PostgreSQL only: after each outbox vacuum, warn in the log (at most every five minutes) when
     * a transaction of this database has been open longer than this (default 1 min; {@link
     * Duration#ZERO}: never). Such a transaction holds back the server's xmin horizon, so no vacuum
     * can remove the outbox's dead index entries and every sequencer batch gets slower until it
     * ends; the warning names its process id, application, state and statement.
     */
    public Builder longTransactionWarning(Duration age) {
      if (age == null || age.isNegative()) {
        throw new ValidationException(
            "longTransactionWarning must be a positive duration, or Duration.ZERO for never; got "
                + age);
      }
      this.longTransactionWarning = age;
      return this;
    }

    /**
     * MariaDB/MySQL and H2 only (they have no LISTEN/NOTIFY): the interval of the wake-up poll
     * right after activity (default 10 ms) and when idle (default 1 s, the poll's whole idle cost:
     * one primary-key read per interval per Boxline instance). In-process signals never wait for
     * it; it bounds how soon a process hears of another process's events.
     */
    public Builder wakeupPoll(Duration fastest, Duration slowest) {
      Objects.requireNonNull(fastest, "fastest");
      Objects.requireNonNull(slowest, "slowest");
      // compareTo, not toMillis/toMinutes: those overflow on huge durations and round 61 s down.
      if (fastest.compareTo(Duration.ofMillis(1)) < 0
          || slowest.compareTo(fastest) < 0
          || slowest.compareTo(Duration.ofMinutes(1)) > 0) {
        throw new ValidationException(
            "wakeupPoll needs 1 ms <= fastest <= slowest <= 1 minute, not "
                + fastest
                + " and "
                + slowest);
      }
      this.fastestWakeupPoll = fastest;
      this.slowestWakeupPoll = slowest;
      return this;
    }

    /**
     * PostgreSQL and MariaDB/MySQL: the width of the log's time segments (default: a quarter of the
     * longest retention by age of any topic, between 1 minute and 7 days). The log is partitioned
     * by the time events are sequenced; while some topic's retention by age is at least two widths,
     * the retention loop cuts the log into segments of this width and drops a segment once all its
     * events are past retention, instead of deleting them row by row (no dead tuples, no vacuum
     * debt). An event then stays up to one width longer than its retention; every segment costs a
     * reader one more index probe. Topics with shorter retentions are still cleaned row by row. See
     * docs/guide/operations.md.
     */
    public Builder logSegmentWidth(Duration width) {
      if (width == null
          || width.compareTo(Duration.ofSeconds(1)) < 0
          || width.compareTo(Duration.ofDays(366)) > 0) {
        throw new ValidationException(
            "logSegmentWidth must be between 1 second and 366 days, not " + width);
      }
      this.logSegmentWidth = width;
      return this;
    }

    /**
     * Streaming replicas of the primary (PostgreSQL hot standbys, MariaDB/MySQL replicas) that
     * answer reads of the log: consumers' fetches and catch-up, tails, the Kafka API's fetches and
     * event browsing. Leases, cursor commits, parking, heads and every write stay on the primary.
     * Replicas take turns; one that fails a read is skipped for 5 s. A replica is used only once
     * its Boxline schema shows the same first migration as the primary's (a data source of another
     * database is refused, with an error in the log). Give each replica a pool of its own with a
     * short connection timeout: a replica that cannot be reached delays a read by that timeout once
     * every 5 s. See docs/guide/operations.md, "Read replicas".
     */
    public Builder readReplicas(java.util.List<DataSource> replicas) {
      Objects.requireNonNull(replicas, "replicas");
      for (DataSource r : replicas) {
        Objects.requireNonNull(r, "replicas must not contain null");
        if (r == dataSource) {
          throw new ValidationException(
              "readReplicas was given the primary's own data source; give the data sources of"
                  + " its streaming replicas (or none)");
        }
      }
      this.readReplicas = java.util.List.copyOf(replicas);
      return this;
    }

    /**
     * How long a read waits for replicas that have not yet replayed the newest events of its
     * partitions before the primary answers it (default 100 ms; {@link Duration#ZERO}: at once). A
     * replica read is complete when it reaches the newest head this store has heard of, so a
     * lagging replica delays a consumer by at most this long and never hides an event from it.
     */
    public Builder replicaWait(Duration wait) {
      if (wait == null || wait.isNegative() || wait.compareTo(Duration.ofMinutes(1)) > 0) {
        throw new ValidationException("replicaWait must be between 0 and 1 minute, not " + wait);
      }
      this.replicaWait = wait;
      return this;
    }

    /** Connects once to detect the database and its version; refuses unsupported ones. */
    public Store build() {
      String product;
      int major;
      int minor;
      String version;
      try (Connection c = dataSource.getConnection()) {
        DatabaseMetaData md = c.getMetaData();
        product = md.getDatabaseProductName();
        version = md.getDatabaseProductVersion();
        major = md.getDatabaseMajorVersion();
        minor = md.getDatabaseMinorVersion();
      } catch (SQLException e) {
        throw new StoreException("cannot connect to detect the database: " + e.getMessage(), e);
      }
      if ("PostgreSQL".equalsIgnoreCase(product)) {
        if (major < 13) {
          throw new ValidationException(
              "PostgreSQL " + version + " is too old; Boxline needs PostgreSQL 13 or newer");
        }
        return new SqlStore(
            dataSource,
            product + " " + major + "." + minor,
            schema,
            tablePrefix,
            new PostgresDialect(
                schema,
                tablePrefix,
                new PostgresDialect.Options(
                    vacuumWhenAutovacuumOff,
                    outboxVacuumEvery,
                    longTransactionWarning,
                    logSegmentWidth)),
            readReplicas,
            replicaWait);
      }
      boolean mariaDb =
          "MariaDB".equalsIgnoreCase(product) || (version != null && version.contains("MariaDB"));
      if (mariaDb || "MySQL".equalsIgnoreCase(product)) {
        // MySQL's own driver reports MariaDB as "MySQL" with a version like
        // "5.5.5-10.11.6-MariaDB".
        Matcher m = VERSION.matcher(version == null ? "" : version.replaceFirst("^5\\.5\\.5-", ""));
        if (m.find()) {
          major = Integer.parseInt(m.group(1));
          minor = Integer.parseInt(m.group(2));
        }
        String name = mariaDb ? "MariaDB" : "MySQL";
        boolean tooOld = mariaDb ? major < 10 || (major == 10 && minor < 6) : major < 8;
        if (tooOld) {
          throw new ValidationException(
              name
                  + " "
                  + version
                  + " is too old; Boxline needs "
                  + (mariaDb
                      ? "MariaDB 10.6 or newer (SKIP LOCKED, JSON_TABLE)"
                      : "MySQL 8.0 or newer (SKIP LOCKED, JSON_TABLE, window functions)"));
        }
        return new SqlStore(
            dataSource,
            name + " " + major + "." + minor,
            schema,
            tablePrefix,
            new MariaDbDialect(mariaDb, fastestWakeupPoll, slowestWakeupPoll, logSegmentWidth),
            readReplicas,
            replicaWait);
      }
      if ("H2".equalsIgnoreCase(product)) {
        // "2.2.224 (2023-09-17)": SKIP LOCKED arrived in 2.2.224.
        Matcher m = H2_VERSION.matcher(version == null ? "" : version.strip());
        int patch = -1;
        if (m.find()) {
          major = Integer.parseInt(m.group(1));
          minor = Integer.parseInt(m.group(2));
          patch = Integer.parseInt(m.group(3));
        }
        boolean tooOld = major < 2 || (major == 2 && (minor < 2 || (minor == 2 && patch < 224)));
        if (tooOld) {
          throw new ValidationException(
              "H2 "
                  + version
                  + " is too old; Boxline needs H2 2.2.224 or newer (FOR UPDATE SKIP LOCKED);"
                  + " use com.h2database:h2:2.2.224 or a newer 2.x");
        }
        return new SqlStore(
            dataSource,
            "H2 " + major + "." + minor + "." + patch,
            schema,
            tablePrefix,
            new H2Dialect(fastestWakeupPoll, slowestWakeupPoll),
            readReplicas,
            replicaWait);
      }
      throw new ValidationException(
          "database '"
              + product
              + " "
              + version
              + "' is not supported; Boxline supports PostgreSQL 13+, H2 2.2.224+,"
              + " MariaDB 10.6+ and MySQL 8.0+");
    }
  }
}
