package io.boxline.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Runs the demo against the local PostgreSQL (127.0.0.1:5432, user postgres). Each run uses schemas
 * of its own and drops them, so this test can run next to others on the same server.
 */
class DemoTest {
  private static final String URL = "jdbc:postgresql://127.0.0.1:5432/postgres";

  @Test
  void smallRunIsVerified() throws SQLException {
    Output out = new Output();
    int code =
        Demo.run(
            out.stream,
            "--jdbc-url",
            URL,
            "--events",
            "1500",
            "--producers",
            "3",
            "--customers",
            "40",
            "--rollback-percent",
            "10");

    String text = out.text();
    assertThat(code).as(text).isEqualTo(0);
    assertThat(text)
        .contains("VERIFIED: 1500 events delivered exactly once and in order")
        .containsPattern("events consumed by billing +1500 ")
        .containsPattern("events consumed by shipping +1500 ")
        .doesNotContain("[FAIL]");
    assertThat(rolledBack(text)).as("some transactions were rolled back").isPositive();
    assertSchemasDropped(text);
  }

  @Test
  void plainJdbcProducersAreVerifiedToo() throws SQLException {
    Output out = new Output();
    int code = Demo.run(out.stream, "--jdbc-url", URL, "--events", "600", "--plain-jdbc");

    assertThat(code).as(out.text()).isEqualTo(0);
    assertThat(out.text()).contains("plain JDBC").contains("VERIFIED: 600 events");
    assertSchemasDropped(out.text());
  }

  @Test
  void badArgumentsExitWithUsage() {
    Output out = new Output();
    assertThat(Demo.run(out.stream, "--events", "zero")).isEqualTo(2);
    assertThat(out.text()).contains("--events", "needs a whole number").contains("Usage:");
  }

  @Test
  void unreachableDatabaseIsAnError() {
    Output out = new Output();
    assertThat(Demo.run(out.stream, "--jdbc-url", "jdbc:postgresql://127.0.0.1:1/postgres"))
        .isEqualTo(3);
    assertThat(out.text()).contains("FAILED: cannot connect to jdbc:postgresql://127.0.0.1:1/");
  }

  private static long rolledBack(String text) {
    Matcher m = Pattern.compile("transactions rolled back\\s+(\\d+)").matcher(text);
    assertThat(m.find()).as(text).isTrue();
    return Long.parseLong(m.group(1));
  }

  private static void assertSchemasDropped(String text) throws SQLException {
    Matcher m =
        Pattern.compile("Schemas: (\\w+) \\(Boxline\\), (\\w+) \\(orders table\\)").matcher(text);
    assertThat(m.find()).as(text).isTrue();
    try (Connection c = DriverManager.getConnection(URL, "postgres", "");
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*) FROM information_schema.schemata WHERE schema_name IN (?, ?)")) {
      ps.setString(1, m.group(1));
      ps.setString(2, m.group(2));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getLong(1)).as("schemas left behind").isZero();
      }
    }
  }

  /** Captures what the demo prints. */
  private static final class Output {
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    final PrintStream stream = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    String text() {
      return bytes.toString(StandardCharsets.UTF_8);
    }
  }
}
