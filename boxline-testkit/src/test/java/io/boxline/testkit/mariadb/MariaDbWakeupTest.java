package io.boxline.testkit.mariadb;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.SuiteSupport;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.Types;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Without LISTEN/NOTIFY, another Boxline instance hears of new events through the adaptive wake-up
 * poll: here a consumer-only instance and a sequencer-only instance share a database, and events
 * published from plain SQL (no Java process hints anyone) reach the consumer well before its
 * fallback (the backlog re-read of every tenth group check-in, about 20 s apart).
 */
class MariaDbWakeupTest {
  @Test
  void anotherInstanceHearsOfSqlPublishedEventsThroughThePoll() throws Exception {
    try (TestDatabase db = TestDatabase.createMariaDb("wakeup")) {
      Boxline sequencer =
          db.boxline(
              b ->
                  b.store(
                      JdbcStore.builder(db.dataSource())
                          .schema(db.schema())
                          .wakeupPoll(Duration.ofMillis(10), Duration.ofMillis(200))
                          .build()));
      Boxline consumer =
          db.boxline(
              b ->
                  b.sequencer(false)
                      .store(
                          JdbcStore.builder(db.dataSource())
                              .schema(db.schema())
                              .wakeupPoll(Duration.ofMillis(10), Duration.ofMillis(200))
                              .build()));
      TopicName t = SuiteSupport.topic(sequencer, "acme/wake/events", 4);
      SuiteSupport.subscribe(sequencer, "s", t);
      List<String> seen = new CopyOnWriteArrayList<>();
      Consumer c = consumer.consumer("s").handler(e -> seen.add(e.key())).start();
      // Past the first check-in, whose backlog read could otherwise find the events by itself.
      Await.until(Duration.ofSeconds(30), "two check-ins", () -> c.checkInCount() >= 2);
      long wakeups = consumer.stats().wakeupsReceived();
      try (Connection conn = db.dataSource().getConnection();
          CallableStatement cs =
              conn.prepareCall("{call " + db.schema() + ".publish(?, ?, ?, ?, ?, ?, ?, ?)}")) {
        for (String key : List.of("a", "b", "c")) {
          cs.setString(1, "acme/wake/events");
          cs.setString(2, "x");
          cs.setString(3, "{}");
          cs.setString(4, key);
          cs.setNull(5, Types.VARCHAR);
          cs.setNull(6, Types.VARCHAR);
          cs.setNull(7, Types.VARCHAR);
          cs.registerOutParameter(8, Types.CHAR);
          cs.execute();
        }
      }
      Await.until(Duration.ofSeconds(8), "3 events in the other instance", () -> seen.size() == 3);
      assertThat(seen).containsExactlyInAnyOrder("a", "b", "c");
      assertThat(consumer.stats().wakeupsReceived()).isGreaterThan(wakeups);
      assertThat(consumer.stats().eventsSequenced()).isZero();
      assertThat(sequencer.stats().eventsSequenced()).isEqualTo(3);
    }
  }
}
