package io.boxline.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * What differs between the databases the benchmarks run on (W1–W3): schemas, the raw-insert
 * baseline of W1, the server-side counters of W3 and the settings printed in the report header.
 * Boxline itself is built the same way on all of them ({@code JdbcStore.builder(pool).schema(name)
 * .build()} picks the dialect).
 */
abstract class BenchDatabase {
  private final String option;
  private final String product;
  private final String defaultUrl;
  private final String defaultUser;
  private final String businessDdl;
  private final String plainEventDdl;

  /**
   * @param businessDdl the DDL of {@link #businessDdl}, {@code %s} standing for the schema
   * @param plainEventDdl the DDL of {@link #plainEventDdl}, likewise
   */
  BenchDatabase(
      String option,
      String product,
      String defaultUrl,
      String defaultUser,
      String businessDdl,
      String plainEventDdl) {
    this.option = option;
    this.product = product;
    this.defaultUrl = defaultUrl;
    this.defaultUser = defaultUser;
    this.businessDdl = businessDdl;
    this.plainEventDdl = plainEventDdl;
  }

  /**
   * The database the JDBC URL points at: {@code jdbc:postgresql:} is PostgreSQL, {@code
   * jdbc:mariadb:} or {@code jdbc:mysql:} MariaDB; anything else is refused.
   */
  static BenchDatabase forUrl(String url) {
    if (url.startsWith("jdbc:postgresql:")) {
      return PostgreSqlDatabase.INSTANCE;
    }
    if (url.startsWith("jdbc:mariadb:") || url.startsWith("jdbc:mysql:")) {
      return MariaDbDatabase.INSTANCE;
    }
    throw new IllegalArgumentException(
        "the benchmarks run on PostgreSQL (jdbc:postgresql:) or MariaDB (jdbc:mariadb:), not "
            + url);
  }

  /** The value of {@code --db=} that selects this database. */
  final String option() {
    return option;
  }

  /** The product name, as in the report header. */
  final String product() {
    return product;
  }

  final String defaultUrl() {
    return defaultUrl;
  }

  final String defaultUser() {
    return defaultUser;
  }

  /** A plain driver data source (no pool). */
  abstract DataSource driver(String url, String user, String password);

  /** The statement that creates the run's schema (on MariaDB a database). */
  abstract String createSchema(String name);

  /** The statement that drops a schema (on MariaDB a database) and everything in it. */
  abstract String dropSchema(String name);

  /** The query listing the schemas (on MariaDB databases) whose names start with a prefix. */
  abstract String listSchemas(String prefix);

  /** Report header lines: server version, durability settings, buffer sizes. */
  abstract void describe(Db db, Map<String, String> env);

  // ------------------------------------------------------------------ W1 raw-insert baseline

  /** DDL of the business table {@code bench_order} in {@code schema}. */
  final String businessDdl(String schema) {
    return String.format(businessDdl, schema);
  }

  /** Inserts one business row; parameters customer, amount_cents. */
  String businessInsert(String schema) {
    return "INSERT INTO "
        + schema
        + ".bench_order (customer, amount_cents, status) VALUES (?, ?,"
        + " 'PLACED')";
  }

  /** {@code name=value} of each server setting, read with {@code query} ({@code %s}: the name). */
  static String settings(Db db, String query, String... names) {
    List<String> out = new ArrayList<>();
    for (String n : names) {
      out.add(n + "=" + db.queryString(String.format(query, n)));
    }
    return String.join(", ", out);
  }

  /** The server counters {@code sql} returns on the monitor connection, read by {@code read}. */
  static long[] readCounters(Connection monitor, String sql, String what, Counters read) {
    try (Statement st = monitor.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      return read.from(rs);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read " + what + ": " + e.getMessage(), e);
    }
  }

  /** Reads {@link #readCounters} from a query's result. */
  interface Counters {
    long[] from(ResultSet rs) throws SQLException;
  }

  /** A LIKE pattern for names that start with {@code prefix}. */
  static String startsWith(String prefix) {
    return "'" + prefix.replace("_", "\\_") + "%'";
  }

  /**
   * DDL of the baseline's event table {@code plain_event}, with the columns of Boxline's outbox.
   */
  final String plainEventDdl(String schema) {
    return String.format(plainEventDdl, schema);
  }

  /**
   * The statement the baseline uses for {@code events} events in one transaction: a single-row
   * INSERT for one, one statement for several (the same shape as Boxline's producer insert).
   */
  abstract String plainInsert(String schema, int events);

  /**
   * Runs {@link #plainInsert} for events {@code first .. first + keys.length - 1}, with the
   * partition of each already computed.
   */
  abstract void insertPlainEvents(
      Connection c, String sql, long first, String[] keys, int[] partitions) throws SQLException;

  // ------------------------------------------------------------------ W3 server-side counters

  /**
   * Server counters read on the caller's monitor connection; W3 uses the delta of element 0 minus
   * one (the second read counts itself).
   */
  abstract long[] counters(Connection monitor);

  /** What element 0 of {@link #counters} counts, for the log and the W3 table header. */
  abstract String counterName();

  /** The W3 table's header of the server-side column. */
  abstract String counterColumn();
}
