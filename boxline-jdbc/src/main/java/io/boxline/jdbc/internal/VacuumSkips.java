package io.boxline.jdbc.internal;

import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a PostgreSQL {@code VACUUM} left out. The server does not fail a vacuum of a table the user
 * may not vacuum (only its owner, the database's owner or a superuser may, or on PostgreSQL 17+ a
 * user with the MAINTAIN privilege): it skips the table with a warning (SQLSTATE 01000, "skipping
 * "outbox" --- only table or database owner can vacuum it"), which JDBC keeps on the statement.
 * Without a look at those warnings an application role would "vacuum" without effect and never be
 * told. A table that {@code SKIP_LOCKED} found locked (55P03) is left for the next vacuum and does
 * not count.
 */
final class VacuumSkips {
  private static final System.Logger LOG =
      // Under the store's name, which operators configure (and the tests watch).
      System.getLogger(SqlStore.class.getName());

  private final AtomicBoolean warned = new AtomicBoolean();

  /**
   * The server's first warning about a table the vacuum {@code st} just ran skipped, and how many
   * more it skipped; null when it skipped none.
   */
  static String skipped(Statement st) throws SQLException {
    String first = null;
    int more = 0;
    for (SQLWarning w = st.getWarnings(); w != null; w = w.getNextWarning()) {
      if ("55P03".equals(w.getSQLState())) {
        continue;
      }
      if (first == null) {
        first = w.getMessage();
      } else {
        more++;
      }
    }
    return first == null || more == 0
        ? first
        : first + ", and " + more + " more table" + (more == 1 ? "" : "s");
  }

  /**
   * Logs {@code message} at WARNING the first time, at DEBUG after that: the cause (a missing
   * privilege) does not go away by itself, and a warning every retention run would only be noise.
   *
   * @return whether this was the first time
   */
  boolean warnOnce(String message) {
    boolean first = warned.compareAndSet(false, true);
    LOG.log(
        first ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG,
        first ? message + " (logged once)" : message);
    return first;
  }
}
