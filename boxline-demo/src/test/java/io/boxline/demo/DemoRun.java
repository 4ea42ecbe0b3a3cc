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

/**
 * One run of the demo with what it printed. The tests run it against the local PostgreSQL
 * (127.0.0.1:5432, user postgres); each run uses schemas of its own and drops them, so the tests
 * can run next to others on the same server.
 */
record DemoRun(int code, String text) {
  static final String URL = "jdbc:postgresql://127.0.0.1:5432/postgres";

  static DemoRun of(String... args) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int code = Demo.run(new PrintStream(bytes, true, StandardCharsets.UTF_8), args);
    return new DemoRun(code, bytes.toString(StandardCharsets.UTF_8));
  }

  /** The first group of {@code regex} in the output; fails when it is not there. */
  String find(String regex) {
    Matcher m = Pattern.compile(regex).matcher(text);
    assertThat(m.find()).as("%s in:%n%s", regex, text).isTrue();
    return m.group(1);
  }

  /** The run's schemas are gone from the database. */
  void assertSchemasDropped() throws SQLException {
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
}
