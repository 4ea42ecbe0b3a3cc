package io.boxline.jdbc.internal;

import javax.sql.DataSource;

/**
 * What a dialect's parts work with: the store's data source, its named statements, where its tables
 * live and how it describes itself.
 *
 * @param idle the connection held for timed statements, or null where the dialect keeps none
 *     ({@link SqlDialect#keepsIdleConnection})
 */
record SqlContext(
    DataSource dataSource,
    JdbcSql db,
    String schema,
    String prefix,
    String description,
    IdleConnection idle) {

  /** "version schema=… prefix=…": how a store describes itself ({@code label} names the schema). */
  static String description(String version, String label, String schema, String prefix) {
    return version + " " + label + "=" + schema + (prefix.isEmpty() ? "" : " prefix=" + prefix);
  }
}
