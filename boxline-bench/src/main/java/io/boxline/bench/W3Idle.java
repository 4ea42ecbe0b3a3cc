package io.boxline.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.NamespacePath;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * W3: what an idle Boxline costs the database. A started Boxline (sequencer leader and wake-up
 * listener, all defaults) and N consumers, each on a subscription of its own, nothing published.
 *
 * <p>Counted two ways over the same window:
 *
 * <ul>
 *   <li>exactly, on the client: a counting proxy sits <em>under</em> the pool, so it sees every
 *       round trip, including the pool's validation pings ({@link Probe});
 *   <li>on the server: the delta of xact_commit + xact_rollback in pg_stat_database, which is per
 *       database, and the database is shared with whatever else runs on the server.
 * </ul>
 */
final class W3Idle {
  record Result(
      int consumers,
      double seconds,
      long statements,
      long pings,
      Map<String, Long> breakdown,
      double serverXactsPerSecond,
      String noise) {
    double perSecond() {
      return statements / seconds;
    }
  }

  private static final Workload.Definition DEF = Workload.define("w3", Bench.Suite.W);

  static final Opt<int[]> CONSUMERS =
      DEF.ints("consumers", "0,1,2,10", "idle consumers, one window per count (a list)");
  static final Opt<Integer> SECONDS = DEF.integer("seconds", 30, "counted seconds per window");
  static final Opt<Integer> SETTLE =
      DEF.integer("settle", 3, "seconds after the consumers start, not counted");

  static final Workload WORKLOAD =
      DEF.runs(
          "what an idle Boxline with N consumers costs the database",
          run -> Report.w3(run.o(), new W3Idle(run).run()));

  private final Options o;
  private final Db db;
  private final String runSchema;

  W3Idle(Run run) {
    this.o = run.o();
    this.db = run.db();
    this.runSchema = run.schema();
  }

  List<Result> run() throws Exception {
    String schema = runSchema + "_w3";
    Probe probe = new Probe(schema);
    List<Result> out = new ArrayList<>();
    try (Connection monitor = db.connect()) {
      return run(schema, probe, out, monitor);
    }
  }

  private List<Result> run(String schema, Probe probe, List<Result> out, Connection monitor)
      throws Exception {
    try (HikariDataSource pool = db.pool("bench-w3", o.get(Bench.POOL), probe.wrap(db.driver()))) {
      TopicName topic = TopicName.of("bench", "events");
      Boxline boxline =
          Boxline.builder().store(JdbcStore.builder(pool).schema(schema).build()).build().start();
      try {
        boxline.admin().createNamespace(NamespacePath.of("bench"));
        boxline.admin().createTopic(topic, o.get(Bench.PARTITIONS));
        Bench.awaitLeader(boxline);
        int subs = 0;
        for (int n : o.get(CONSUMERS)) {
          List<Consumer> consumers = new ArrayList<>();
          for (int i = 0; i < n; i++) {
            String name = "idle-" + (++subs);
            boxline.admin().createSubscription(SubscriptionSpec.of(name, topic));
            consumers.add(boxline.consumer(name).handler(e -> {}).start());
          }
          Thread.sleep(o.get(SETTLE) * 1000L);
          probe.reset();
          long before = Db.transactions(monitor);
          Noise noise = Noise.start("");
          long t0 = System.nanoTime();
          Thread.sleep(o.get(SECONDS) * 1000L);
          long t1 = System.nanoTime();
          long after = Db.transactions(monitor);
          Map<String, Long> breakdown = probe.snapshot();
          long statements = 0;
          long pings = 0;
          for (Map.Entry<String, Long> e : breakdown.entrySet()) {
            statements += e.getValue();
            pings += e.getKey().endsWith("(isValid)") ? e.getValue() : 0;
          }
          double seconds = (t1 - t0) / 1e9;
          // Each counter read is a transaction of its own; the first one falls inside the window.
          double server = (after - before - 1) / seconds;
          Result r = new Result(n, seconds, statements, pings, breakdown, server, noise.since());
          out.add(r);
          Bench.log(
              "W3 %d idle consumer(s): %.2f statements/s (%d in %.0f s, of which %d validation"
                  + " pings); server: %.1f transactions/s in the shared database",
              n, r.perSecond(), statements, seconds, pings, server);
          for (Consumer c : consumers) {
            c.close();
          }
          if (boxline.stats().eventsSequenced() != 0) {
            throw new BenchFailure("W3: something was sequenced while idle");
          }
        }
      } finally {
        boxline.close();
      }
    } finally {
      db.dropSchema(schema);
    }
    return out;
  }
}
