package io.boxline.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;
import javax.sql.DataSource;
import org.mariadb.jdbc.MariaDbDataSource;

/**
 * MariaDB (10.6+): a schema is a database; the baseline table has the columns and types of
 * Boxline's MariaDB outbox and is written with the same statement shapes (a single-row INSERT for
 * one event, one multi-row INSERT for several); W3's server figure is the delta of {@code SHOW
 * GLOBAL STATUS}'s {@code Questions}, which counts the whole server.
 */
final class MariaDbDatabase extends BenchDatabase {
  static final MariaDbDatabase INSTANCE = new MariaDbDatabase();

  /** Boxline's own expression for "now" on MariaDB: microseconds since the epoch, server clock. */
  static final String NOW_MICROS = "UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))";

  static final String BUSINESS_DDL =
      "CREATE TABLE %s.bench_order (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,"
          + " customer TEXT NOT NULL, amount_cents BIGINT NOT NULL, status TEXT NOT NULL,"
          + " created_at BIGINT NOT NULL DEFAULT ("
          + NOW_MICROS
          + ")) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin";
  static final String PLAIN_EVENT_DDL =
      "CREATE TABLE %s.plain_event (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,"
          + " event_id CHAR(36) CHARACTER SET ascii NOT NULL, topic_id BIGINT NOT NULL,"
          + " `partition` INT, event_key TEXT, event_type TEXT NOT NULL, source TEXT,"
          + " content_type TEXT NOT NULL, payload LONGBLOB NOT NULL, headers LONGTEXT,"
          + " created_at BIGINT NOT NULL)"
          + " ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin";
  static final String PLAIN_INSERT =
      "INSERT INTO %s.plain_event (event_id, topic_id, `partition`, event_key, event_type, source,"
          + " content_type, payload, headers, created_at) VALUES ";
  static final String PLAIN_ROW = "(?, ?, ?, ?, ?, ?, ?, ?, ?, " + NOW_MICROS + ")";

  private MariaDbDatabase() {
    super(
        "mariadb",
        "MariaDB",
        "jdbc:mariadb://127.0.0.1:3306/?sslMode=disable",
        "root",
        BUSINESS_DDL,
        PLAIN_EVENT_DDL);
  }

  @Override
  public DataSource driver(String url, String user, String password) {
    try {
      MariaDbDataSource ds = new MariaDbDataSource(url);
      ds.setUser(user);
      ds.setPassword(password);
      return ds;
    } catch (SQLException e) {
      throw new IllegalArgumentException("bad MariaDB URL " + url + ": " + e.getMessage(), e);
    }
  }

  @Override
  public String createSchema(String name) {
    return "CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin";
  }

  @Override
  public String dropSchema(String name) {
    return "DROP DATABASE IF EXISTS " + name;
  }

  @Override
  public String listSchemas(String prefix) {
    return "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE "
        + BenchDatabase.startsWith(prefix);
  }

  @Override
  public void describe(Db db, Map<String, String> env) {
    env.put("MariaDB", db.queryString("SELECT VERSION()"));
    env.put(
        "durability",
        BenchDatabase.settings(
            db,
            "SELECT @@%s",
            "innodb_flush_log_at_trx_commit",
            "sync_binlog",
            "log_bin",
            "innodb_flush_method",
            "innodb_doublewrite"));
    env.put(
        "innodb_buffer_pool_size",
        db.queryLong("SELECT @@innodb_buffer_pool_size") / (1024 * 1024) + "MB");
  }

  @Override
  public String plainInsert(String schema, int events) {
    StringBuilder sb = new StringBuilder(String.format(PLAIN_INSERT, schema));
    for (int i = 0; i < events; i++) {
      sb.append(i == 0 ? "" : ", ").append(PLAIN_ROW);
    }
    return sb.toString();
  }

  @Override
  public void insertPlainEvents(
      Connection c, String sql, long first, String[] keys, int[] partitions) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      int p = 1;
      for (int i = 0; i < keys.length; i++) {
        ps.setString(p++, Payloads.id(first + i).toString());
        ps.setLong(p++, 1L);
        ps.setInt(p++, partitions[i]);
        ps.setString(p++, keys[i]);
        ps.setString(p++, "order.placed");
        ps.setString(p++, null);
        ps.setString(p++, "application/json");
        ps.setBytes(p++, Payloads.payload(first + i));
        ps.setString(p++, null);
      }
      ps.executeUpdate();
    }
  }

  /** Questions (statements clients sent, the reading one included) and COMMITs + ROLLBACKs. */
  @Override
  public long[] counters(Connection monitor) {
    return BenchDatabase.readCounters(
        monitor,
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions', 'Com_commit', 'Com_rollback')",
        "SHOW GLOBAL STATUS",
        rs -> {
          long[] v = new long[2];
          while (rs.next()) {
            long n = rs.getLong(2);
            if (rs.getString(1).equalsIgnoreCase("Questions")) {
              v[0] = n;
            } else {
              v[1] += n;
            }
          }
          return v;
        });
  }

  @Override
  public String counterName() {
    return "Questions/s on the server";
  }

  @Override
  public String counterColumn() {
    return "Server Questions/s, whole server (control without Boxline)";
  }
}
