package io.boxline.jdbc.internal;

import io.boxline.StoreException;
import io.boxline.ValidationException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * What the dialects' migrations share: the version table, the files applied in order, and the
 * messages for a schema newer than this Boxline or a user who may not change it.
 */
final class SqlMigrations {
  private SqlMigrations() {}

  /**
   * Applies the migrations the schema lacks where DDL commits implicitly (MariaDB / MySQL, H2):
   * every statement runs on its own (each is re-runnable) and each file is recorded right after it
   * was applied.
   *
   * @param createSchema the statement that creates the schema if it does not exist
   * @param kind what the dialect calls a schema, for messages
   * @param step set to what runs, for the caller's failure message
   */
  static void applyOneByOne(
      SqlContext ctx,
      SqlDialect dialect,
      Connection c,
      Step step,
      String createSchema,
      List<String> migrations,
      String kind)
      throws SQLException {
    JdbcSql db = ctx.db();
    step.at("create_version_table");
    try (Statement st = c.createStatement()) {
      st.execute(createSchema);
      st.execute(db.sql(step.name()));
    }
    int current = currentVersion(c, db, step);
    if (current > migrations.size()) {
      throw newerSchema(ctx, kind, current, migrations.size());
    }
    for (int v = current + 1; v <= migrations.size(); v++) {
      String file = migrations.get(v - 1);
      step.at(file);
      String script = SqlScript.load(dialect.folder(), file, ctx.schema(), ctx.prefix());
      for (String statement : SqlScript.statements(script)) {
        try (Statement st = c.createStatement()) {
          st.execute(statement);
        }
      }
      step.at("record_version");
      try (PreparedStatement ps = c.prepareStatement(db.sql(step.name()))) {
        ps.setInt(1, v);
        ps.setString(2, file);
        dialect.insertUnlessPresent(ps);
      }
    }
  }

  /** The version the schema is at ({@code current_version}). */
  static int currentVersion(Connection c, JdbcSql db, Step step) throws SQLException {
    step.at("current_version");
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(db.sql(step.name()))) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** The schema was migrated by a newer Boxline ({@code kind} is what the dialect calls it). */
  static ValidationException newerSchema(SqlContext ctx, String kind, int version, int known) {
    return new ValidationException(
        kind
            + " "
            + ctx.schema()
            + " is at version "
            + version
            + " but this Boxline knows only "
            + known
            + "; upgrade Boxline");
  }

  /**
   * A migration the database user may not run: says how to set the schema up instead ({@code kind}
   * is what the dialect calls a schema).
   */
  static StoreException denied(SqlContext ctx, String kind, String user, SQLException e) {
    return new StoreException(
        "cannot migrate Boxline's "
            + kind
            + " "
            + ctx.schema()
            + ": database user '"
            + user
            + "' may not change it ("
            + e.getMessage()
            + "). Run the migrations with the owner (migrator) role instead:"
            + " JdbcStore.builder(ownerDataSource).schema(\""
            + ctx.schema()
            + "\").build().migrate(), or the DDL from JdbcStore.exportDdl; then start Boxline as"
            + " this user with Boxline.builder().migrate(false). See"
            + " docs/guide/least-privilege.md",
        e);
  }
}
