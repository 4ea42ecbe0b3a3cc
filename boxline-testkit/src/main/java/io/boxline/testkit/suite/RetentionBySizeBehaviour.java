package io.boxline.testkit.suite;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.OutgoingEvent;
import io.boxline.RetentionPolicy;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Retention by size: each partition keeps its newest N events. */
public abstract class RetentionBySizeBehaviour {
  protected TestDatabase db;
  protected Boxline boxline;

  protected abstract TestDatabase newDatabase(String hint);

  @BeforeEach
  void open() {
    db = newDatabase("bysize");
    boxline = db.boxline(b -> b.retentionInterval(Duration.ofMillis(200)));
  }

  @AfterEach
  void close() {
    db.close();
  }

  private long count(String where) {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + db.table("log") + " l " + where)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The log's partition column in SQL ({@code partition} is a reserved word on MariaDB). */
  private String partitionColumn() {
    return db.dialect() == TestDatabase.Dialect.MARIADB ? "`partition`" : "partition";
  }

  private void publish(TopicName t, int perKey) {
    List<Object> events = new ArrayList<>();
    for (int i = 0; i < perKey; i++) {
      for (String k : List.of("a", "b", "c", "d")) {
        events.add(OutgoingEvent.builder(t).type("t").key(k).payload(new byte[8]).build());
      }
    }
    boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, events));
  }

  @Test
  void eachPartitionKeepsItsNewestEventsOnceConsumed() {
    TopicName t = SuiteSupport.topic(boxline, "acme/size/events", 2);
    SuiteSupport.subscribe(boxline, "size", t);
    boxline.admin().setRetention(t, RetentionPolicy.bySize(10));
    publish(t, 25); // 100 events over 2 partitions
    Await.until(Duration.ofSeconds(30), "100 sequenced", () -> count("") == 100);
    long runs = boxline.stats().retentionRuns();
    Await.until(
        Duration.ofSeconds(30),
        "two retention runs",
        () -> boxline.stats().retentionRuns() >= runs + 2);
    assertThat(count("")).as("nothing consumed yet, so everything is kept").isEqualTo(100);

    Consumer c = boxline.consumer("size").handler(e -> {}).start();
    Await.until(Duration.ofSeconds(30), "all handled", () -> c.handledCount() == 100);
    Await.until(Duration.ofSeconds(30), "10 left per partition", () -> count("") == 20);
    for (int p = 0; p < 2; p++) {
      assertThat(count("WHERE l." + partitionColumn() + " = " + p))
          .as("partition %d holds 10", p)
          .isEqualTo(10);
      assertThat(
              count(
                  "WHERE l."
                      + partitionColumn()
                      + " = "
                      + p
                      + " AND l.seq > (SELECT x.last_seq - 10 FROM "
                      + db.table("partition")
                      + " x WHERE x.topic_id = l.topic_id AND x."
                      + partitionColumn()
                      + " = l."
                      + partitionColumn()
                      + ")"))
          .as("partition %d holds exactly its newest 10", p)
          .isEqualTo(10);
    }
  }

  @Test
  void deleteUnconsumedBoundsThePartitionEvenWithoutConsumers() {
    TopicName t = SuiteSupport.topic(boxline, "acme/size2/events", 1);
    SuiteSupport.subscribe(boxline, "slow", t);
    boxline.admin().setRetention(t, RetentionPolicy.bySize(5).deleteUnconsumed());
    publish(t, 10); // 40 events in one partition
    Await.until(Duration.ofSeconds(30), "5 left", () -> count("") == 5);
  }
}
