package io.boxline.testkit.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.EventTypes;
import io.boxline.Partitioner;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.SqlPublishBehaviour;
import io.boxline.testkit.suite.SuiteSupport;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

class PostgresSqlPublishTest extends SqlPublishBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }

  @Override
  protected boolean storesNul() {
    return false;
  }

  @Override
  protected String callPublish(Connection c, String schema, Args a) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT " + schema + ".publish(?, ?, CAST(? AS jsonb), ?, CAST(? AS jsonb), ?, ?)")) {
      ps.setString(1, a.topic());
      ps.setString(2, a.type());
      ps.setString(3, a.payload());
      ps.setString(4, a.key());
      ps.setString(5, a.headers());
      ps.setString(6, a.idempotencyKey());
      ps.setString(7, a.source());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  /**
   * A publish from SQL adds the sequencer's wake-up (a NOTIFY on the outbox channel, as a Java
   * publisher in another process sends) to its transaction: a listener hears it at the commit, not
   * before; and with the safety poll at a minute, events published one at a time from a plain
   * connection reach the consumer.
   */
  @Test
  void aPublishFromSqlWakesTheSequencer() throws Exception {
    Boxline boxline =
        db.boxline(
            b ->
                b.eventTypes(EventTypes.empty())
                    .sequencerLease(Duration.ofMinutes(3))
                    .sequencerIdlePoll(Duration.ofMinutes(1)));
    TopicName t = SuiteSupport.topic(boxline, "acme/sql/woken", 2);
    SuiteSupport.Recorder seen = SuiteSupport.record(boxline, "woken", t);
    Args event = new Args("acme/sql/woken", "t", "{}", "k", null, null, null);
    try (Connection listener = db.dataSource().getConnection();
        Connection c = db.dataSource().getConnection()) {
      PGConnection pg = listener.unwrap(PGConnection.class);
      try (Statement st = listener.createStatement()) {
        st.execute("LISTEN " + db.schema() + "_outbox");
      }
      c.setAutoCommit(false);
      callPublish(c, db.schema(), event);
      assertThat(pg.getNotifications(200)).as("nothing before the commit").isNullOrEmpty();
      c.commit();
      PGNotification[] heard = pg.getNotifications(10_000);
      assertThat(heard).as("the wake-up, sent at the commit").isNotEmpty();
      assertThat(heard[0].getName()).isEqualTo(db.schema() + "_outbox");
      c.setAutoCommit(true);
      for (int i = 0; i < 10; i++) {
        callPublish(c, db.schema(), event);
        int expected = i + 2;
        Await.until(Duration.ofSeconds(20), "event " + i, () -> seen.size() >= expected);
      }
    }
    assertThat(seen.size()).isEqualTo(11);
  }

  /**
   * The sequencer places rows published from SQL with the SQL murmur2 when the Java partitioner is
   * the default: on 2,000 generated keys (every length 0-40, characters of 1 to 4 UTF-8 bytes) and
   * partition counts it agrees with {@link Partitioner#kafkaCompatible()}.
   */
  @Test
  void sqlMurmur2AgreesWithTheJavaPartitioner() throws Exception {
    db.boxline(EventTypes.empty());
    long seed = System.nanoTime();
    java.util.Random r = new java.util.Random(seed);
    int[] cps = "aZ09-_ é字😀".codePoints().toArray();
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT " + db.schema() + ".murmur2_partition(?, ?)")) {
      for (int i = 0; i < 2000; i++) {
        StringBuilder key = new StringBuilder();
        int n = r.nextInt(41);
        for (int j = 0; j < n; j++) {
          key.appendCodePoint(cps[r.nextInt(cps.length)]);
        }
        int partitions = r.nextBoolean() ? 1 + r.nextInt(64) : 1 + r.nextInt(65536);
        ps.setString(1, key.toString());
        ps.setInt(2, partitions);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          assertThat(rs.getInt(1))
              .as("seed " + seed + ": key '" + key + "' over " + partitions)
              .isEqualTo(Partitioner.kafkaCompatible().partition(key.toString(), partitions));
        }
      }
    }
  }

  /**
   * With a custom Java partitioner the sequencer cannot place SQL-published rows in SQL: they go
   * through Java (the multi-statement path), land where that partitioner says, and keep each key's
   * order.
   */
  @Test
  void aCustomPartitionerPlacesSqlPublishedRowsThroughJava() throws Exception {
    Boxline boxline =
        db.boxline(b -> b.eventTypes(EventTypes.empty()).partitioner((key, n) -> key.length() % n));
    TopicName t = SuiteSupport.topic(boxline, "acme/sql/custom", 4);
    SuiteSupport.Recorder seen = SuiteSupport.record(boxline, "custom", t);
    try (Connection c = db.dataSource().getConnection()) {
      for (int i = 0; i < 40; i++) {
        String key = "k".repeat(1 + i % 6);
        callPublish(
            c,
            db.schema(),
            new Args("acme/sql/custom", "t", "{\"i\": " + i + "}", key, null, null, null));
      }
    }
    Await.until(Duration.ofSeconds(30), "40 events", () -> seen.size() >= 40);
    for (io.boxline.Event e : seen.all) {
      assertThat(e.partition()).as(e.key()).isEqualTo(e.key().length() % 4);
    }
    java.util.Map<String, java.util.List<Integer>> byKey = new java.util.HashMap<>();
    for (io.boxline.Event e : seen.all) {
      String body = new String(e.payload(), java.nio.charset.StandardCharsets.UTF_8);
      byKey
          .computeIfAbsent(e.key(), k -> new java.util.ArrayList<>())
          .add(Integer.parseInt(body.replaceAll("[^0-9]", "")));
    }
    byKey.values().forEach(list -> assertThat(list).isSorted());
  }
}
