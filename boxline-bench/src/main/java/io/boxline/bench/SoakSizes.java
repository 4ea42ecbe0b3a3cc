package io.boxline.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * What the soak reads from the database each sample: sizes of the log, the outbox and all of
 * Boxline's tables, and the log's live and dead tuples. Every statement runs in auto-commit (so no
 * lock outlives it: the log's segment maintenance takes an ACCESS EXCLUSIVE lock).
 *
 * <p>The log is the table {@code log}, or, once partitioned, every table of its partition tree
 * ({@code pg_partition_tree}): {@code pg_total_relation_size} (heap, TOAST, indexes), {@code
 * pg_indexes_size}, and {@code n_live_tup}, {@code n_dead_tup}, {@code autovacuum_count} from
 * pg_stat_user_tables, summed. All tables: every ordinary table of the schema (the log's partitions
 * included), with their autovacuum and plain VACUUM runs ({@code vacuum_count}: Boxline's own, when
 * the server's autovacuum is off).
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

  private final String schema;

  SoakSizes(String schema) {
    this.schema = schema;
  }

  Reading read(Connection c) throws SQLException {
    long parts;
    long logBytes;
    long logIndex;
    long live;
    long dead;
    long logVacuums;
    String log = schema + ".log";
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
}
