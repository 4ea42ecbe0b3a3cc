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
  /** Migrations in order: version → resource name. */
  static final List<String> POSTGRES_MIGRATIONS =
      List.of(
          "V1__base.sql",
          "V2__consumer_groups.sql",
          "V3__retries_and_dead_letters.sql",
          "V4__delayed_delivery.sql",
          "V5__inbox_and_retention.sql",
          "V6__sequencer_fast_path.sql",
          "V7__policy_batch_size.sql",
          "V8__retention_by_size.sql");

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
    String text = load(dialect, "queries.sql", schema, prefix);
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

  /** Full DDL of the newest schema version for PostgreSQL. */
  public static String exportPostgres(String schema, String prefix) {
    Map<String, String> q = named("postgresql", schema, prefix);
    StringBuilder out = new StringBuilder();
    out.append("-- Boxline schema for PostgreSQL: schema ")
        .append(schema)
        .append(", table prefix '")
        .append(prefix)
        .append("'\n");
    out.append("CREATE SCHEMA IF NOT EXISTS ").append(schema).append(";\n\n");
    out.append(q.get("create_version_table")).append(";\n\n");
    int version = 0;
    for (String m : POSTGRES_MIGRATIONS) {
      version++;
      out.append(load("postgresql", m, schema, prefix)).append("\n");
      out.append("INSERT INTO ")
          .append(schema)
          .append('.')
          .append(prefix)
          .append("schema_version (version, description) VALUES (")
          .append(version)
          .append(", '")
          .append(m)
          .append("');\n");
    }
    return out.toString();
  }
}
