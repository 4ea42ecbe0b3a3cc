package io.boxline.testkit;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A database server found once and shared by every test in the JVM (see {@link PostgresServer} and
 * {@link MariaDbServer}): reached by URL, user and password, with a schema of its own per test.
 */
abstract class SharedServer implements TestServer {
  private final String url;
  private final String user;
  private final String password;
  private final String origin;
  private final String schemaKind;

  /**
   * @param origin where the server came from, for logs
   * @param schemaKind what the server calls a test's schema, for messages
   */
  SharedServer(String url, String user, String password, String origin, String schemaKind) {
    this.url = url;
    this.user = user;
    this.password = password;
    this.origin = origin;
    this.schemaKind = schemaKind;
  }

  /** The statement that drops a test's schema and everything in it. */
  abstract String dropStatement(String schema);

  static String envOr(String name, String fallback) {
    String v = System.getenv(name);
    return v == null ? fallback : v;
  }

  /** Null when the server answers, else why not. */
  static String probe(String url, String user, String password) {
    try (Connection c = DriverManager.getConnection(url, user, password)) {
      return c.isValid(5) ? null : "connection not valid";
    } catch (SQLException e) {
      return e.getMessage();
    }
  }

  @Override
  public String url() {
    return url;
  }

  @Override
  public String user() {
    return user;
  }

  @Override
  public String password() {
    return password;
  }

  @Override
  public String origin() {
    return origin;
  }

  @Override
  public void dropSchema(String schema) {
    io.boxline.Names.requireSchema(schema);
    try (Connection c = DriverManager.getConnection(url, user, password);
        Statement st = c.createStatement()) {
      st.execute(dropStatement(schema));
    } catch (SQLException e) {
      throw new IllegalStateException("could not drop test " + schemaKind + " " + schema, e);
    }
  }
}
