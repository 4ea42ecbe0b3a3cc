package io.boxline.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * What the soak reads from the database each sample: sizes of the log, the outbox and all of
 * Boxline's tables, and the log's live and dead tuples. Every statement runs in auto-commit (so no
 * lock outlives it: the log's segment maintenance takes an ACCESS EXCLUSIVE lock), and {@link
 * #statements} counts them, so the idle windows can take them out of the server's counter.
 *
 * <ul>
 *   <li>PostgreSQL: the log is the table {@code log}, or, once partitioned, every table of its
 *       partition tree ({@code pg_partition_tree}): {@code pg_total_relation_size} (heap, TOAST,
 *       indexes), {@code pg_indexes_size}, and {@code n_live_tup}, {@code n_dead_tup}, {@code
 *       autovacuum_count} from pg_stat_user_tables, summed. All tables: every ordinary table of the
 *       schema (the log's partitions included), with their autovacuum and plain VACUUM runs ({@code
 *       vacuum_count}: Boxline's own, when the server's autovacuum is off).
 *   <li>MariaDB: a table's size is its file's ({@code file_size} of
 *       information_schema.INNODB_SYS_TABLESPACES, partitions summed: what it takes on disk now;
 *       InnoDB does not give a file's space back by itself), else {@code data_length +
 *       index_length} of information_schema.TABLES; index sizes are TABLES' {@code index_length}
 *       and live rows its {@code table_rows}, both InnoDB statistics (estimates, refreshed after
 *       about 10 % of a table changed, so they move in steps); for dead tuples InnoDB's history
 *       list length ({@code Innodb_history_list_length}: undo records not purged yet, the whole
 *       server). MariaDB has no autovacuum: those columns are left empty.
 * </ul>
 */
final class SoakSizes {
  /** One reading; -1: not measured. */
  record Reading(
      long logBytes,
      long logIndexBytes,
      long logPartitions,
      long logLive,
      long logDead,
      long logAutovacuums,
      long outboxBytes,
      long totalBytes,
      long totalIndexBytes,
      long autovacuums,
      long vacuums) {
    static final Reading NONE = new Reading(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  }

  private static final String PG_LOG =
      "WITH tree AS (SELECT relid FROM pg_partition_tree(?::text::regclass)),"
          + " rel AS (SELECT relid FROM tree UNION ALL"
          + " SELECT ?::text::regclass WHERE NOT EXISTS (SELECT 1 FROM tree))"
          + " SELECT count(*) FILTER (WHERE c.relkind = 'r'),"
          + " coalesce(sum(pg_total_relation_size(rel.relid)), 0),"
          + " coalesce(sum(pg_indexes_size(rel.relid)), 0),"
          + " coalesce(sum(s.n_live_tup), 0), coalesce(sum(s.n_dead_tup), 0),"
          + " coalesce(sum(s.autovacuum_count), 0)"
          + " FROM rel JOIN pg_class c ON c.oid = rel.relid"
          + " LEFT JOIN pg_stat_user_tables s ON s.relid = rel.relid";

  private static final String PG_ALL =
      "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0),"
          + " coalesce(sum(pg_indexes_size(c.oid)), 0),"
          + " coalesce(sum(pg_total_relation_size(c.oid)) FILTER (WHERE c.relname = 'outbox'), 0),"
          + " coalesce(sum(s.autovacuum_count), 0), coalesce(sum(s.vacuum_count), 0)"
          + " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
          + " LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid"
          + " WHERE n.nspname = ? AND c.relkind = 'r'";

  private static final String MARIADB_TABLES =
      "SELECT table_name, data_length, index_length, table_rows FROM information_schema.TABLES"
          + " WHERE table_schema = ?";

  private static final String MARIADB_FILES =
      "SELECT name, file_size FROM information_schema.INNODB_SYS_TABLESPACES WHERE name LIKE ?";

  private static final String MARIADB_PARTITIONS =
      "SELECT count(*) FROM information_schema.PARTITIONS"
          + " WHERE table_schema = ? AND table_name = 'log' AND partition_name IS NOT NULL";

  private final boolean postgres;
  private final String schema;
  private final java.util.concurrent.atomic.AtomicLong statements =
      new java.util.concurrent.atomic.AtomicLong();

  SoakSizes(boolean postgres, String schema) {
    this.postgres = postgres;
    this.schema = schema;
  }

  /** Statements this reader sent so far (each a transaction of its own). */
  long statements() {
    return statements.get();
  }

  Reading read(Connection c) throws SQLException {
    return postgres ? postgres(c) : mariaDb(c);
  }

  private Reading postgres(Connection c) throws SQLException {
    long parts;
    long logBytes;
    long logIndex;
    long live;
    long dead;
    long logVacuums;
    String log = schema + ".log";
    statements.incrementAndGet();
    try (PreparedStatement ps = c.prepareStatement(PG_LOG)) {
      ps.setString(1, log);
      ps.setString(2, log);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        parts = rs.getLong(1);
        logBytes = rs.getLong(2);
        logIndex = rs.getLong(3);
        live = rs.getLong(4);
        dead = rs.getLong(5);
        logVacuums = rs.getLong(6);
      }
    }
    statements.incrementAndGet();
    try (PreparedStatement ps = c.prepareStatement(PG_ALL)) {
      ps.setString(1, schema);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new Reading(
            logBytes,
            logIndex,
            parts,
            live,
            dead,
            logVacuums,
            rs.getLong(3),
            rs.getLong(1),
            rs.getLong(2),
            rs.getLong(4),
            rs.getLong(5));
      }
    }
  }

  private Reading mariaDb(Connection c) throws SQLException {
    // The tables' files first: what they take on disk, read as it is now.
    java.util.Map<String, Long> files = new java.util.HashMap<>();
    statements.incrementAndGet();
    try (PreparedStatement ps = c.prepareStatement(MARIADB_FILES)) {
      ps.setString(1, schema + "/%");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String table = rs.getString(1).substring(schema.length() + 1);
          int hash = table.indexOf('#'); // a partition: log#P#p0
          files.merge(
              (hash < 0 ? table : table.substring(0, hash)).toLowerCase(java.util.Locale.ROOT),
              rs.getLong(2),
              Long::sum);
        }
      }
    }
    long logBytes = 0;
    long logIndex = 0;
    long live = 0;
    long outbox = 0;
    long total = 0;
    long totalIndex = 0;
    statements.incrementAndGet();
    try (PreparedStatement ps = c.prepareStatement(MARIADB_TABLES)) {
      ps.setString(1, schema);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String table = rs.getString(1).toLowerCase(java.util.Locale.ROOT);
          long index = rs.getLong(3);
          long bytes = files.getOrDefault(table, rs.getLong(2) + index);
          total += bytes;
          totalIndex += index;
          if (table.equals("log")) {
            logBytes = bytes;
            logIndex = index;
            live = rs.getLong(4);
          } else if (table.equals("outbox")) {
            outbox = bytes;
          }
        }
      }
    }
    long parts;
    statements.incrementAndGet();
    try (PreparedStatement ps = c.prepareStatement(MARIADB_PARTITIONS)) {
      ps.setString(1, schema);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        parts = Math.max(1, rs.getLong(1));
      }
    }
    long history = 0;
    statements.incrementAndGet();
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'")) {
      if (rs.next()) {
        history = rs.getLong(2);
      }
    }
    return new Reading(
        logBytes, logIndex, parts, live, history, -1, outbox, total, totalIndex, -1, -1);
  }
}
