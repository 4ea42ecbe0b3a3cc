package io.boxline.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/** PostgreSQL: schemas, unnest-array baseline inserts, pg_stat_database counters. */
final class PostgreSqlDatabase extends BenchDatabase {
  static final PostgreSqlDatabase INSTANCE = new PostgreSqlDatabase();

  static final String BUSINESS_DDL =
      "CREATE TABLE %s.bench_order (id bigserial PRIMARY KEY, customer text NOT NULL,"
          + " amount_cents bigint NOT NULL, status text NOT NULL,"
          + " created_at timestamptz NOT NULL DEFAULT now())";
  static final String PLAIN_EVENT_DDL =
      "CREATE TABLE %s.plain_event (id bigserial PRIMARY KEY, event_id uuid NOT NULL,"
          + " topic_id bigint NOT NULL, partition integer, event_key text, event_type text NOT NULL,"
          + " source text, content_type text NOT NULL, payload bytea NOT NULL, headers jsonb,"
          + " created_at timestamptz NOT NULL DEFAULT now())";
  static final String PLAIN_INSERT_ONE =
      "INSERT INTO %s.plain_event (event_id, topic_id, partition, event_key, event_type, source,"
          + " content_type, payload, headers) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb)";
  static final String PLAIN_INSERT_MANY =
      "INSERT INTO %s.plain_event (event_id, topic_id, partition, event_key, event_type, source,"
          + " content_type, payload, headers) SELECT * FROM unnest(?::uuid[], ?::bigint[],"
          + " ?::integer[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bytea[], ?::jsonb[])";

  private PostgreSqlDatabase() {
    super(
        "postgresql",
        "PostgreSQL",
        "jdbc:postgresql://127.0.0.1:5432/postgres",
        "postgres",
        BUSINESS_DDL,
        PLAIN_EVENT_DDL);
  }

  @Override
  public DataSource driver(String url, String user, String password) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(url);
    ds.setUser(user);
    ds.setPassword(password);
    return ds;
  }

  @Override
  public String createSchema(String name) {
    return "CREATE SCHEMA " + name;
  }

  @Override
  public String dropSchema(String name) {
    return "DROP SCHEMA IF EXISTS " + name + " CASCADE";
  }

  @Override
  public String listSchemas(String prefix) {
    return "SELECT nspname FROM pg_namespace WHERE nspname LIKE "
        + BenchDatabase.startsWith(prefix);
  }

  @Override
  public void describe(Db db, Map<String, String> env) {
    env.put("PostgreSQL", db.queryString("SHOW server_version"));
    env.put(
        "durability",
        BenchDatabase.settings(db, "SHOW %s", "fsync", "synchronous_commit", "wal_sync_method"));
    env.put("shared_buffers", db.queryString("SHOW shared_buffers"));
  }

  @Override
  public String plainInsert(String schema, int events) {
    return String.format(events == 1 ? PLAIN_INSERT_ONE : PLAIN_INSERT_MANY, schema);
  }

  @Override
  public void insertPlainEvents(
      Connection c, String sql, long first, String[] keys, int[] partitions) throws SQLException {
    int n = keys.length;
    if (n == 1) {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        ps.setObject(1, Payloads.id(first));
        ps.setLong(2, 1L);
        ps.setInt(3, partitions[0]);
        ps.setString(4, keys[0]);
        ps.setString(5, "order.placed");
        ps.setString(6, null);
        ps.setString(7, "application/json");
        ps.setBytes(8, Payloads.payload(first));
        ps.setString(9, null);
        ps.executeUpdate();
      }
      return;
    }
    UUID[] ids = new UUID[n];
    Long[] topics = new Long[n];
    Integer[] parts = new Integer[n];
    String[] types = new String[n];
    String[] sources = new String[n];
    String[] contentTypes = new String[n];
    byte[][] payloads = new byte[n][];
    String[] headers = new String[n];
    for (int i = 0; i < n; i++) {
      ids[i] = Payloads.id(first + i);
      topics[i] = 1L;
      parts[i] = partitions[i];
      types[i] = "order.placed";
      contentTypes[i] = "application/json";
      payloads[i] = Payloads.payload(first + i);
    }
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setArray(1, c.createArrayOf("uuid", ids));
      ps.setArray(2, c.createArrayOf("bigint", topics));
      ps.setArray(3, c.createArrayOf("integer", parts));
      ps.setArray(4, c.createArrayOf("text", keys));
      ps.setArray(5, c.createArrayOf("text", types));
      ps.setArray(6, c.createArrayOf("text", sources));
      ps.setArray(7, c.createArrayOf("text", contentTypes));
      ps.setObject(8, payloads);
      ps.setArray(9, c.createArrayOf("text", headers));
      ps.executeUpdate();
    }
  }

  /**
   * Database-wide counters from pg_stat_database for the connected database: transactions (commits
   * + rollbacks), tuples returned, fetched, inserted, updated, deleted. One autocommit statement,
   * so one transaction of its own, on the caller's (long-lived) monitor connection.
   */
  @Override
  public long[] counters(Connection monitor) {
    return BenchDatabase.readCounters(
        monitor,
        "SELECT xact_commit + xact_rollback, tup_returned, tup_fetched, tup_inserted, tup_updated,"
            + " tup_deleted FROM pg_stat_database WHERE datname = current_database()",
        "pg_stat_database",
        rs -> {
          rs.next();
          long[] v = new long[6];
          for (int i = 0; i < 6; i++) {
            v[i] = rs.getLong(i + 1);
          }
          return v;
        });
  }

  @Override
  public String counterName() {
    return "transactions/s on the database";
  }

  @Override
  public String counterColumn() {
    return "Server xacts/s, shared DB (control without Boxline)";
  }
}
