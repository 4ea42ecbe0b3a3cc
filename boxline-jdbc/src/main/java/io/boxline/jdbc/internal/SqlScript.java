package io.boxline.jdbc.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Loads SQL resources and substitutes the two validated identifiers, {@code ${schema}} and {@code
 * ${p}}. No other text is ever put into SQL.
 */
public final class SqlScript {
  /** Migrations in order: version → resource name (public for tests that build an older schema). */
  public static final List<String> POSTGRES_MIGRATIONS =
      List.of(
          "V1__base.sql",
          "V2__consumer_groups.sql",
          "V3__retries_and_dead_letters.sql",
          "V4__delayed_delivery.sql",
          "V5__inbox_and_retention.sql",
          "V6__sequencer_fast_path.sql",
          "V7__policy_batch_size.sql",
          "V8__retention_by_size.sql",
          "V9__kept_plans.sql",
          "V10__in_transaction_sequencing.sql",
          "V11__publish_checks.sql",
          "V12__group_limits.sql",
          "V13__subscription_activity.sql",
          "V14__member_status.sql",
          "V15__log_segments.sql",
          "V16__commit_cursors_across.sql");

  /**
   * MariaDB / MySQL migrations in order (their own numbering; the schema_version table is per
   * schema).
   */
  static final List<String> MARIADB_MIGRATIONS =
      List.of(
          "V1__base.sql",
          "V2__consumer_groups.sql",
          "V3__retries_dead_letters_inbox.sql",
          "V4__publish_procedure.sql",
          "V5__check_in_procedure.sql",
          "V6__in_transaction_sequencing.sql",
          "V7__publish_checks.sql",
          "V8__outbox_rejected.sql",
          "V9__group_limits.sql",
          "V10__subscription_activity.sql",
          "V11__member_status.sql",
          "V12__publish_idempotency_key_spaces.sql",
          "V13__log_segments.sql");

  /** H2 migrations in order (their own numbering). */
  static final List<String> H2_MIGRATIONS =
      List.of(
          "V1__base.sql",
          "V2__consumer_groups.sql",
          "V3__retries_dead_letters_inbox.sql",
          "V4__in_transaction_sequencing.sql",
          "V5__outbox_rejected.sql",
          "V6__group_limits.sql",
          "V7__subscription_activity.sql",
          "V8__member_status.sql");

  private SqlScript() {}

  static String load(String dialect, String resource, String schema, String prefix) {
    String path = "/io/boxline/jdbc/" + dialect + "/" + resource;
    try (InputStream in = SqlScript.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + path);
      }
      String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      return text.replace("${schema}", schema).replace("${p}", prefix);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Parses a file of {@code -- name: x} sections into named statements. */
  static Map<String, String> named(String dialect, String schema, String prefix) {
    // Statements that read the same in every dialect first; the dialect's own file may not redefine
    // one (a name in both is a mistake, caught here).
    Map<String, String> queries = parse(load("common", "queries.sql", schema, prefix));
    for (Map.Entry<String, String> q :
        parse(load(dialect, "queries.sql", schema, prefix)).entrySet()) {
      if (queries.putIfAbsent(q.getKey(), q.getValue()) != null) {
        throw new IllegalStateException(
            "query " + q.getKey() + " is in common/queries.sql and in " + dialect + "/queries.sql");
      }
    }
    return queries;
  }

  private static Map<String, String> parse(String text) {
    Map<String, String> queries = new LinkedHashMap<>();
    String name = null;
    StringBuilder sql = new StringBuilder();
    for (String line : text.split("\n")) {
      if (line.startsWith("-- name:")) {
        if (name != null) {
          queries.put(name, sql.toString().strip());
        }
        name = line.substring("-- name:".length()).strip();
        sql.setLength(0);
      } else if (name != null && !line.startsWith("--")) {
        sql.append(line).append('\n');
      }
    }
    if (name != null) {
      queries.put(name, sql.toString().strip());
    }
    return queries;
  }

  /**
   * Full DDL of the newest schema version for PostgreSQL. The schema is created only when missing
   * (a {@code DO} block), so the owner of a schema an administrator created runs it without the
   * CREATE privilege on the database.
   */
  public static String exportPostgres(String schema, String prefix) {
    return export(
        "postgresql",
        "PostgreSQL: schema",
        named("postgresql", schema, prefix).get("create_schema"),
        POSTGRES_MIGRATIONS,
        "INSERT INTO ",
        "schema_version (version, description) VALUES (",
        "",
        schema,
        prefix);
  }

  /**
   * Splits a MariaDB/MySQL script into statements the way the {@code mysql} client does: a
   * statement ends with the current delimiter ({@code ;} unless a {@code DELIMITER x} line changed
   * it) at the end of a line. Comment-only lines are dropped.
   */
  public static List<String> statements(String script) {
    List<String> out = new java.util.ArrayList<>();
    String delimiter = ";";
    StringBuilder current = new StringBuilder();
    for (String line : script.split("\n")) {
      String trimmed = line.strip();
      if (trimmed.regionMatches(true, 0, "DELIMITER ", 0, 10)) {
        delimiter = trimmed.substring(10).strip();
        continue;
      }
      if (current.length() == 0 && (trimmed.isEmpty() || trimmed.startsWith("--"))) {
        continue;
      }
      if (trimmed.endsWith(delimiter)) {
        current.append(line, 0, line.lastIndexOf(delimiter));
        String statement = current.toString().strip();
        if (!statement.isEmpty()) {
          out.add(statement);
        }
        current.setLength(0);
      } else {
        current.append(line).append('\n');
      }
    }
    if (!current.toString().isBlank()) {
      out.add(current.toString().strip());
    }
    return out;
  }

  /**
   * Full DDL of the newest schema version for MariaDB / MySQL, runnable with the {@code mysql} or
   * {@code mariadb} client (it uses {@code DELIMITER} around the stored procedure) or with {@link
   * #statements}.
   */
  public static String exportMariaDb(String schema, String prefix) {
    return export(
        "mariadb",
        "MariaDB 10.6+ / MySQL 8.0+: database",
        "CREATE DATABASE IF NOT EXISTS " + schema + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
        MARIADB_MIGRATIONS,
        "INSERT IGNORE INTO ",
        "schema_version (version, description, applied_at) VALUES (",
        ", UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))",
        schema,
        prefix);
  }

  /**
   * Full DDL of the newest schema version for H2 (2.2.224+): statements end with {@code ;} at the
   * end of a line, so {@link #statements} or H2's {@code RUNSCRIPT} runs it.
   */
  public static String exportH2(String schema, String prefix) {
    return export(
        "h2",
        "H2 2.2.224+: schema",
        "CREATE SCHEMA IF NOT EXISTS " + schema,
        H2_MIGRATIONS,
        "MERGE INTO ",
        "schema_version (version, description, applied_at) KEY (version) VALUES (",
        ", CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)",
        schema,
        prefix);
  }

  /**
   * A dialect's full DDL: a header naming {@code title} and the schema, {@code createSchema}, the
   * version table, then each migration and the row that records it: {@code insert}, the version
   * table, {@code columns}, the version and file name, then {@code appliedAt} (empty, or a further
   * value with its leading comma).
   */
  private static String export(
      String dialect,
      String title,
      String createSchema,
      List<String> migrations,
      String insert,
      String columns,
      String appliedAt,
      String schema,
      String prefix) {
    Map<String, String> q = named(dialect, schema, prefix);
    StringBuilder out = new StringBuilder();
    out.append("-- Boxline schema for ")
        .append(title)
        .append(' ')
        .append(schema)
        .append(", table prefix '")
        .append(prefix)
        .append("'\n");
    out.append(createSchema).append(";\n\n");
    out.append(q.get("create_version_table")).append(";\n\n");
    int version = 0;
    for (String m : migrations) {
      version++;
      out.append(load(dialect, m, schema, prefix)).append("\n");
      out.append(insert)
          .append(schema)
          .append('.')
          .append(prefix)
          .append(columns)
          .append(version)
          .append(", '")
          .append(m)
          .append('\'')
          .append(appliedAt)
          .append(");\n");
    }
    return out.toString();
  }
}
