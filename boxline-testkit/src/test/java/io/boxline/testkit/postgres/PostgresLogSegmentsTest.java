package io.boxline.testkit.postgres;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.body;
import static io.boxline.testkit.suite.SuiteSupport.publish;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.RetentionPolicy;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.internal.SqlScript;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.LogSegmentsBehaviour;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The PostgreSQL log in time segments (V15__log_segments.sql, PostgresLogSegments): the shared
 * behaviour, and an installation from before segments that keeps its events through the migration
 * and has them dropped once they expire.
 */
class PostgresLogSegmentsTest extends LogSegmentsBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }

  @Override
  protected long partitionsOfTheLog() {
    return count(
        "SELECT count(*) FROM pg_inherits WHERE inhparent = '" + db.table("log") + "'::regclass");
  }

  @Test
  void aLogFromBeforeSegmentsIsMigratedReadAndDroppedOnceExpired() throws Exception {
    // Version 14 of the schema, with 25,000 events per partition written an hour ago: more than a
    // segment may check under its lock, so the first split seals the old segment first.
    int perPartition = 25_000;
    execute("CREATE SCHEMA IF NOT EXISTS " + db.schema());
    execute(
        "CREATE TABLE "
            + db.table("schema_version")
            + " (version integer PRIMARY KEY, description text NOT NULL,"
            + " applied_at timestamptz NOT NULL DEFAULT now())");
    List<String> files = SqlScript.POSTGRES_MIGRATIONS.subList(0, 14);
    assertThat(files.get(13)).isEqualTo("V14__member_status.sql");
    for (int v = 1; v <= files.size(); v++) {
      execute(migration(files.get(v - 1)));
      execute(
          "INSERT INTO "
              + db.table("schema_version")
              + " (version, description) VALUES ("
              + v
              + ", '"
              + files.get(v - 1)
              + "')");
    }
    String s = db.schema();
    execute("INSERT INTO " + s + ".namespace (path) VALUES ('acme')");
    execute(
        "INSERT INTO "
            + s
            + ".topic (namespace_id, name, partitions) SELECT id, 'old', 2 FROM "
            + s
            + ".namespace WHERE path = 'acme'");
    execute(
        "INSERT INTO "
            + s
            + ".partition (topic_id, partition, last_seq) SELECT id, p, "
            + perPartition
            + " FROM "
            + s
            + ".topic, (VALUES (0), (1)) v(p)");
    execute(
        "INSERT INTO "
            + s
            + ".log (topic_id, partition, seq, event_id, event_type, content_type, payload,"
            + " created_at, sequenced_at) SELECT t.id, v.p, g, gen_random_uuid(), 'old',"
            + " 'text/plain', convert_to('old-' || v.p || '-' || g, 'UTF8'),"
            + " now() - interval '1 hour', now() - interval '1 hour' FROM "
            + s
            + ".topic t, generate_series(1, "
            + perPartition
            + ") g, (VALUES (0), (1)) v(p)");

    Boxline boxline = boxline(); // migrates to version 15
    assertThat(
            count(
                "SELECT count(*) FROM pg_partitioned_table WHERE partrelid = '"
                    + db.table("log")
                    + "'::regclass"))
        .isEqualTo(1);
    TopicName t = TopicName.parse("acme/old");
    boxline.admin().createSubscription(SubscriptionSpec.of("reader", t));
    List<String> read = new CopyOnWriteArrayList<>();
    boxline.consumer("reader").handler(e -> read.add(body(e))).start();
    publish(boxline, t, "new", 10);
    Await.until(WAIT, "every old and new event read", () -> read.size() == 2 * perPartition + 10);
    // In order per partition: the old ones first, in sequence.
    List<String> partition0 = new ArrayList<>();
    for (String b : read) {
      if (b.startsWith("old-0-")) {
        partition0.add(b);
      }
    }
    assertThat(partition0).hasSize(perPartition);
    assertThat(partition0.get(0)).isEqualTo("old-0-1");
    assertThat(partition0.get(perPartition - 1)).isEqualTo("old-0-" + perPartition);

    // A retention long enough for segments: the old segment is sealed, split off, and dropped once
    // its end has aged past retention; the new events stay (they are younger than retention).
    boxline.admin().setRetention(t, RetentionPolicy.byAge(Duration.ofSeconds(3)));
    Await.until(
        Duration.ofSeconds(60),
        "the old segment dropped",
        () -> count("SELECT count(*) FROM " + db.table("log") + " WHERE event_type = 'old'") == 0);
    // The run's counters are added up when the whole retention run ends, a little after the drop.
    Await.until(
        WAIT, "the drop counted", () -> boxline.stats().logSegmentEvents() >= 2L * perPartition);
    assertThat(boxline.stats().logSegmentEvents()).isGreaterThanOrEqualTo(2L * perPartition);
    assertThat(count("SELECT count(*) FROM " + db.table("log_segment") + " WHERE number = 0"))
        .isZero();
    assertThat(
            count(
                "SELECT count(*) FROM pg_constraint WHERE conname = 'log_seal' AND connamespace = '"
                    + s
                    + "'::regnamespace"))
        .isZero();
  }

  // ------------------------------------------------------------------ helpers

  private String migration(String file) throws IOException {
    try (InputStream in = getClass().getResourceAsStream("/io/boxline/jdbc/postgresql/" + file)) {
      assertThat(in).as(file).isNotNull();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8)
          .replace("${schema}", db.schema())
          .replace("${p}", "");
    }
  }

  private void execute(String sql) throws SQLException {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }
}
