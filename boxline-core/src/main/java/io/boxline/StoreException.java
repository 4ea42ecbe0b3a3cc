package io.boxline;

/**
 * A database call failed. Carries the statement's name and SQL text (never any parameter values).
 */
public class StoreException extends BoxlineException {
  private final String statement;
  private final String sql;

  public StoreException(String statement, String sql, Throwable cause) {
    super(
        "database call '" + statement + "' failed: " + cause.getMessage() + "\n  SQL: " + sql,
        cause);
    this.statement = statement;
    this.sql = sql;
  }

  public StoreException(String message, Throwable cause) {
    super(message, cause);
    this.statement = null;
    this.sql = null;
  }

  /** Name of the query that failed, or null when the failure was not tied to one statement. */
  public String statement() {
    return statement;
  }

  /** SQL text of the failed statement, or null. */
  public String sql() {
    return sql;
  }
}
