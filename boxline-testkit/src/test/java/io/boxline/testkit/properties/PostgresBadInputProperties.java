package io.boxline.testkit.properties;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.boxline.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * {@link BadInputProperties} on PostgreSQL, plus the SQL {@code publish()} function: every refusal
 * raises an error whose message starts with {@code boxline:} (or PostgreSQL's own, for a NUL in
 * text) and writes nothing.
 */
class PostgresBadInputProperties extends BadInputProperties {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Override
  TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }

  private long outboxAndLog() throws SQLException {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT (SELECT count(*) FROM "
                    + db.table("outbox")
                    + ") + (SELECT count(*) FROM "
                    + db.table("log")
                    + ")")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Property(tries = TRIES)
  void theSqlPublishFunctionStoresExactlyOrRefusesWithItsPrefix(
      @ForAll("text") String topic,
      @ForAll("text") String type,
      @ForAll("text") String body,
      @ForAll("text") String key,
      @ForAll("text") String headerValue,
      @ForAll("text") String idempotencyKey)
      throws Exception {
    TRIED.incrementAndGet();
    String target = topic.length() % 2 == 0 ? events.toString() : topic;
    String payload = JSON.writeValueAsString(Map.of("body", body));
    String headers = JSON.writeValueAsString(Map.of("h", headerValue));
    long before = outboxAndLog();
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT " + db.schema() + ".publish(?, ?, ?::jsonb, ?, ?::jsonb, ?)")) {
      ps.setString(1, target);
      ps.setString(2, type);
      ps.setString(3, payload);
      ps.setString(4, key);
      ps.setString(5, headers);
      ps.setString(6, idempotencyKey);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getObject(1)).as("the event id").isNotNull();
      }
    } catch (SQLException e) {
      assertThat(e.getMessage())
          .satisfiesAnyOf(
              m -> assertThat(m).contains("boxline:"),
              m -> assertThat(m).containsIgnoringCase("0x00"),
              m -> assertThat(m).containsIgnoringCase("\\u0000"),
              m -> assertThat(m).containsIgnoringCase("invalid byte sequence"),
              m -> assertThat(m).containsIgnoringCase("unsupported Unicode escape"));
      assertThat(outboxAndLog()).as("nothing written").isEqualTo(before);
      return;
    }
    assertThat(outboxAndLog()).isGreaterThanOrEqualTo(before);
  }
}
