package io.boxline.bench;

import static io.boxline.bench.GfKit.check;
import static io.boxline.bench.GfKit.f;
import static io.boxline.bench.GfKit.log;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.RetentionPolicy;
import io.boxline.RetryPolicy;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.bench.GfKit.BenchDb;
import io.boxline.bench.GfKit.CheckFailed;
import io.boxline.jdbc.JdbcStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Failure-handling benchmarks (issue 4). Usage, from the repository root:
 *
 * <pre>
 * ./mvnw -o -q -pl boxline-bench exec:exec -Dexec.executable=java \
 *     -Dexec.args="-cp %classpath io.boxline.bench.FailureBench all"
 * </pre>
 *
 * <ul>
 *   <li><b>F1</b> retry-store cost: end-to-end throughput of healthy keys with no failures vs. with
 *       1 % of the keys poisoned (every event of theirs fails and is parked, retried and
 *       dead-lettered), and the statements it costs per parked event.
 *   <li><b>F2</b> bloat: a steady load with a 30-s topic retention and a 5-s retention interval for
 *       a few minutes; table sizes, live/dead tuples and autovacuum runs sampled every 15 s.
 * </ul>
 *
 * Every workload runs in a database of its own ({@code bench_gf_<workload>_<random>}), dropped at
 * the end. A failed correctness check exits non-zero.
 */
public final class FailureBench {
  private FailureBench() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 1 && args[0].contains(" ")) {
      args = args[0].trim().split("\\s+");
    }
    if (args.length == 0) {
      args = new String[] {"all"};
    }
    GfKit.Options o = GfKit.Options.parse(args, 1);
    GfKit.quietLogs(o.getBool("verbose", false));
    List<String> workloads = new ArrayList<>();
    for (String w : args[0].toLowerCase(Locale.ROOT).split(",")) {
      if (w.equals("all")) {
        workloads.addAll(List.of("f1", "f2"));
      } else if (List.of("f1", "f2").contains(w)) {
        workloads.add(w);
      } else {
        throw new IllegalArgumentException("unknown workload " + w + "; use f1, f2 or all");
      }
    }
    StringBuilder report = new StringBuilder(GfKit.header("Boxline failure benchmarks", args));
    System.out.print(report);
    long started = System.nanoTime();
    try {
      for (String w : workloads) {
        String part = w.equals("f1") ? f1(o) : f2(o);
        report.append(part).append('\n');
        System.out.println();
        System.out.println(part);
      }
    } catch (CheckFailed e) {
      System.out.println("BENCHMARK FAILED (correctness): " + e.getMessage());
      GfKit.write("failures-FAILED", report + "\nFAILED: " + e.getMessage() + "\n");
      System.exit(1);
    }
    report.append(
        f(
            "Total time %.0f s; load average at the end %s; Boxline warnings logged: %d. All"
                + " correctness checks passed.%n",
            (System.nanoTime() - started) / 1e9, GfKit.load(), GfKit.WARNINGS.get()));
    System.out.println(report);
    System.out.println("Written to " + GfKit.write("failures", report.toString()).toAbsolutePath());
    System.exit(0);
  }

  // ================================================================== F1
  record F1Run(
      String kind,
      int run,
      int events,
      int healthy,
      int poisoned,
      double healthySeconds,
      double produceSeconds,
      double allDeadSeconds,
      long statements,
      long pings,
      long serverXacts,
      Map<String, Long> byLabel,
      String load) {
    double healthyRate() {
      return healthy / healthySeconds;
    }
  }

  static boolean poisonedKey(int key, boolean poison) {
    return poison && key % 100 == 7;
  }

  static String f1(GfKit.Options o) throws Exception {
    int events = o.getInt("f1.events", 50_000);
    int keys = o.getInt("f1.keys", 1000);
    int partitions = o.getInt("f1.partitions", 4);
    int pairs = o.getInt("f1.runs", 3);
    int producers = o.getInt("f1.producers", 2);
    int txn = o.getInt("f1.txn", 100);
    RetryPolicy policy =
        RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(50))
            .inPlaceAttempts(1)
            .maxAttempts(3);
    List<F1Run> runs = new ArrayList<>();
    try (BenchDb db = GfKit.BenchDb.create(o, "f1");
        Connection maintenance = db.maintenance()) {
      Probe probe = new Probe(GfKit.SCHEMA);
      HikariDataSource pool = db.pool("f1", o.getInt("f1.pool", 16), probe);
      Boxline boxline =
          Boxline.builder()
              .store(JdbcStore.builder(pool).schema(GfKit.SCHEMA).build())
              .instanceId("f1-main")
              .build()
              .start();
      try {
        boxline.admin().createNamespace(NamespacePath.of("bench"));
        GfKit.awaitLeader(boxline);
        int run = 0;
        // A warm-up pair (not reported), then alternating healthy / poisoned runs.
        for (int pair = 0; pair <= pairs; pair++) {
          for (boolean poison : new boolean[] {false, true}) {
            F1Run r =
                f1Run(
                    db,
                    maintenance,
                    probe,
                    boxline,
                    ++run,
                    poison,
                    pair == 0 ? Math.min(events, 5000) : events,
                    keys,
                    partitions,
                    producers,
                    txn,
                    policy,
                    o.getBool("f1.trace", false));
            if (pair > 0) {
              runs.add(r);
            }
          }
        }
      } finally {
        boxline.close();
      }
    }
    return f1Report(runs, events, keys, partitions, producers, txn, policy);
  }

  private static F1Run f1Run(
      BenchDb db,
      Connection maintenance,
      Probe probe,
      Boxline boxline,
      int run,
      boolean poison,
      int events,
      int keys,
      int partitions,
      int producers,
      int txn,
      RetryPolicy policy,
      boolean trace)
      throws Exception {
    TopicName topic = TopicName.of("bench", "f1-" + run);
    String sub = "f1-" + run;
    boxline.admin().createTopic(topic, partitions);
    boxline.admin().createSubscription(SubscriptionSpec.of(sub, topic));
    int poisonedEvents = 0;
    for (int i = 0; i < events; i++) {
      poisonedEvents += poisonedKey(i % keys, poison) ? 1 : 0;
    }
    int healthyEvents = events - poisonedEvents;
    int maxAttempts = policy.maxAttempts();
    AtomicIntegerArray seen = new AtomicIntegerArray(events);
    AtomicIntegerArray attempts = new AtomicIntegerArray(events);
    AtomicLongArray lastOfKey = new AtomicLongArray(keys);
    for (int k = 0; k < keys; k++) {
      lastOfKey.set(k, -1);
    }
    AtomicLong healthy = new AtomicLong();
    AtomicLong poisonAttempts = new AtomicLong();
    AtomicLong healthyDone = new AtomicLong();
    AtomicLong poisonDone = new AtomicLong();
    AtomicReference<String> error = new AtomicReference<>();
    int poisonedTotal = poisonedEvents;
    Consumer consumer =
        boxline
            .consumer(sub)
            .id(sub + "-c")
            .retryPolicy(policy)
            .handler(
                (Event e) -> {
                  long idx = GfKit.index(e.id());
                  if (idx < 0 || idx >= events) {
                    error.compareAndSet(null, "unknown event " + e);
                    return;
                  }
                  int i = (int) idx;
                  int key = i % keys;
                  if (poisonedKey(key, poison)) {
                    // Per-key order of the retries: a later event of the key is tried only after
                    // the earlier one was dead-lettered (all its attempts used).
                    long prev = lastOfKey.get(key);
                    if (prev > i) {
                      error.compareAndSet(
                          null, "poisoned key " + key + ": " + i + " after " + prev);
                    } else if (prev >= 0 && prev < i && attempts.get((int) prev) < maxAttempts) {
                      error.compareAndSet(
                          null,
                          "poisoned key "
                              + key
                              + ": event "
                              + i
                              + " tried while "
                              + prev
                              + " had only "
                              + attempts.get((int) prev)
                              + " attempts");
                    }
                    lastOfKey.set(key, i);
                    int a = attempts.incrementAndGet(i);
                    if (a > maxAttempts) {
                      error.compareAndSet(null, "event " + i + " attempted " + a + " times");
                    }
                    if (poisonAttempts.incrementAndGet() == (long) poisonedTotal * maxAttempts) {
                      poisonDone.set(System.nanoTime());
                    }
                    throw new IllegalStateException("poisoned key " + key);
                  }
                  if (seen.getAndIncrement(i) != 0) {
                    error.compareAndSet(null, "event " + i + " delivered twice");
                  }
                  long prev = lastOfKey.getAndSet(key, i);
                  if (prev >= i) {
                    error.compareAndSet(null, "key " + key + ": event " + i + " after " + prev);
                  }
                  if (healthy.incrementAndGet() == healthyEvents) {
                    healthyDone.set(System.nanoTime());
                  }
                })
            .start();
    Thread.sleep(1000); // the consumer has checked in
    long av0 = db.autovacuumRuns();
    probe.reset();
    long x0 = db.transactions(maintenance);
    long t0 = System.nanoTime();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < producers; t++) {
      int me = t;
      Thread th =
          new Thread(
              () -> {
                try {
                  List<OutgoingEvent> batch = new ArrayList<>(txn);
                  for (int i = 0; i < events; i++) {
                    if ((i % keys) % producers != me) {
                      continue;
                    }
                    batch.add(
                        OutgoingEvent.builder(topic)
                            .id(GfKit.id(i))
                            .type("bench.event")
                            .key("key-" + (i % keys))
                            .contentType("application/json")
                            .payload(GfKit.payload(i))
                            .build());
                    if (batch.size() == txn) {
                      List<OutgoingEvent> b = List.copyOf(batch);
                      boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, b));
                      batch.clear();
                    }
                  }
                  if (!batch.isEmpty()) {
                    List<OutgoingEvent> b = List.copyOf(batch);
                    boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, b));
                  }
                } catch (Throwable e) {
                  failure.compareAndSet(null, e);
                }
              },
              "producer-" + t);
      threads.add(th);
      th.start();
    }
    for (Thread th : threads) {
      th.join();
    }
    long produced = System.nanoTime();
    check(failure.get() == null, "F1 producer failed: " + failure.get());
    String what = "F1 run " + run + (poison ? " (1 % poisoned)" : " (healthy)");
    long deadline = System.nanoTime() + 300_000_000_000L;
    while (healthyDone.get() == 0 || (poisonedTotal > 0 && poisonDone.get() == 0)) {
      if (error.get() != null) {
        break;
      }
      if (System.nanoTime() > deadline) {
        consumer.close();
        throw new CheckFailed(
            what
                + ": after 300 s "
                + healthy.get()
                + " of "
                + healthyEvents
                + " healthy events handled, "
                + poisonAttempts.get()
                + " of "
                + (long) poisonedTotal * maxAttempts
                + " poisoned attempts");
      }
      Thread.sleep(10);
    }
    long end = Math.max(healthyDone.get(), poisonDone.get());
    Thread.sleep(1000); // the last commits and dead-letter writes land
    long x1 = db.transactions(maintenance);
    Map<String, Probe.Series> snap = probe.snapshot();
    long autovacuum = db.autovacuumRuns() - av0;
    String load = GfKit.load();
    check(error.get() == null, what + ": " + error.get());
    long statements = 0;
    long pings = 0;
    Map<String, Long> byLabel = new TreeMap<>();
    for (Map.Entry<String, Probe.Series> e : snap.entrySet()) {
      String k = e.getKey();
      if (k.endsWith("| borrow (getConnection)")) {
        continue;
      }
      if (k.contains("(isValid)")) {
        pings += e.getValue().count();
      } else {
        statements += e.getValue().count();
      }
      byLabel.merge(k, e.getValue().count(), Long::sum);
    }
    if (trace) {
      System.out.println(what + ": statements by thread and statement (count, total ms):");
      for (Map.Entry<String, Probe.Series> e : snap.entrySet()) {
        long sum = 0;
        for (long v : e.getValue().sorted()) {
          sum += v;
        }
        System.out.println(f("  %6d %9.1f  %s", e.getValue().count(), sum / 1e6, e.getKey()));
      }
    }
    if (trace && poison) {
      explainDueParked(db, sub);
    }
    // Correctness: every healthy event exactly once, every poisoned one a dead letter after
    // maxAttempts attempts, nothing else parked, the cursor at the end.
    for (int i = 0; i < events; i++) {
      if (poisonedKey(i % keys, poison)) {
        check(
            attempts.get(i) == maxAttempts,
            what + ": poisoned event " + i + " attempted " + attempts.get(i) + " times");
      } else {
        check(seen.get(i) == 1, what + ": event " + i + " handled " + seen.get(i) + " times");
      }
    }
    check(
        consumer.handledCount() == healthyEvents,
        what + ": handledCount " + consumer.handledCount() + ", expected " + healthyEvents);
    consumer.close();
    List<DeadLetter> dead = boxline.deadLetters().list(DeadLetterQuery.of(sub).limit(100_000));
    check(
        dead.size() == poisonedTotal,
        what + ": " + dead.size() + " dead letters, expected " + poisonedTotal);
    for (DeadLetter d : dead) {
      long idx = GfKit.index(d.event().id());
      check(
          idx >= 0 && poisonedKey((int) (idx % keys), poison) && d.attempts() == maxAttempts,
          what + ": unexpected dead letter " + d);
    }
    long lag = boxline.admin().lag(sub).stream().mapToLong(l -> l.backlog()).sum();
    check(lag == 0, what + ": cursor " + lag + " events behind");
    long parkedNotDead =
        db.queryLong(
            "SELECT count(*) FROM "
                + GfKit.SCHEMA
                + ".parked p JOIN "
                + GfKit.SCHEMA
                + ".subscription s ON s.id = p.subscription_id WHERE s.name = '"
                + sub
                + "' AND p.state <> 'DEAD'");
    check(parkedNotDead == 0, what + ": " + parkedNotDead + " parked events not dead");
    F1Run r =
        new F1Run(
            poison ? "1 % of keys poisoned" : "healthy",
            run,
            events,
            healthyEvents,
            poisonedTotal,
            (healthyDone.get() - t0) / 1e9,
            (produced - t0) / 1e9,
            poisonedTotal == 0 ? Double.NaN : (end - t0) / 1e9,
            statements,
            pings,
            x1 - x0,
            byLabel,
            load + (autovacuum > 0 ? f(" (autovacuum runs %d)", autovacuum) : ""));
    log(
        "%s: %d healthy events in %.2f s = %.0f/s (produced in %.2f s), all dead-lettered after"
            + " %.2f s; %d statements + %d pings, %d server transactions; load %s",
        what,
        healthyEvents,
        r.healthySeconds(),
        r.healthyRate(),
        r.produceSeconds(),
        r.allDeadSeconds(),
        statements,
        pings,
        x1 - x0,
        load);
    return r;
  }

  /** Diagnosis: the plan of the due-parked query, custom and generic, for partition 0. */
  static void explainDueParked(BenchDb db, String sub) {
    String q =
        "WITH heads AS (SELECT DISTINCT ON (coalesce('k:' || event_key, 's:' || seq)) seq, state,"
            + " attempts, next_attempt_at, first_failed_at FROM boxline.parked WHERE"
            + " subscription_id = $1 AND topic_id = $2 AND partition = $3 AND (state <> 'DEAD' OR"
            + " $4) ORDER BY coalesce('k:' || event_key, 's:' || seq), seq) SELECT l.seq,"
            + " l.event_id, l.payload, h.attempts FROM heads h JOIN boxline.log l ON l.topic_id ="
            + " $5 AND l.partition = $6 AND l.seq = h.seq WHERE h.state <> 'DEAD' AND"
            + " h.next_attempt_at <= now() + interval '1 hour' ORDER BY h.seq LIMIT $7";
    try (Connection c = db.connect();
        var st = c.createStatement()) {
      long subId = db.queryLong("SELECT id FROM boxline.subscription WHERE name = '" + sub + "'");
      long topicId =
          db.queryLong(
              "SELECT topic_id FROM boxline.subscription_topic WHERE subscription_id = " + subId);
      st.execute("PREPARE dp(bigint, bigint, int, boolean, bigint, int, int) AS " + q);
      for (String mode : List.of("force_custom_plan", "force_generic_plan")) {
        st.execute("SET plan_cache_mode = " + mode);
        System.out.println("EXPLAIN ANALYZE due_parked, " + mode + ":");
        try (ResultSet rs =
            st.executeQuery(
                "EXPLAIN (ANALYZE, COSTS OFF) EXECUTE dp("
                    + subId
                    + ", "
                    + topicId
                    + ", 0, false, "
                    + topicId
                    + ", 0, 100)")) {
          while (rs.next()) {
            System.out.println("    " + rs.getString(1));
          }
        }
      }
      for (String t : List.of("parked", "log")) {
        System.out.println(
            "  "
                + t
                + ": last analyze "
                + db.queryLong(
                    "SELECT count(*) FROM pg_stat_user_tables WHERE relname = '"
                        + t
                        + "' AND coalesce(last_analyze, last_autoanalyze) IS NOT NULL")
                + " (1 = analyzed), rows "
                + db.queryLong("SELECT count(*) FROM boxline." + t));
      }
    } catch (Exception e) {
      System.out.println("explain failed: " + e);
    }
  }

  private static String f1Report(
      List<F1Run> runs,
      int events,
      int keys,
      int partitions,
      int producers,
      int txn,
      RetryPolicy policy) {
    StringBuilder sb = new StringBuilder("## F1 — what the retry store costs\n\n");
    sb.append(
        f(
            "%d events per run on a fresh topic of %d partitions (and a fresh subscription), %d"
                + " keys, published by %d producer threads in transactions of %d events"
                + " (boxline.inTransaction + publishAll, each key owned by one thread), consumed at"
                + " the same time by one consumer (concurrency 4, batch 100) whose handler does"
                + " nothing — except in the poisoned runs, where it throws for every event of the"
                + " keys with key %% 100 == 7 (10 keys = 1 %%). Retry policy %s. Time runs from the"
                + " first publish to the moment the last healthy event was handled (healthy"
                + " throughput) and to the moment the last poisoned event used its last attempt"
                + " (all dead-lettered). Statements: JDBC proxy under the pool (exact; every"
                + " statement, COMMIT and validation ping of every thread) from the first publish"
                + " until 1 s after the end. (pg_stat_database is not used here: PostgreSQL 15"
                + " defers a backend's counter flush by up to ~10 s, too coarse for runs of a few"
                + " seconds.) One warm-up pair of 5,000 events is not reported.%n%n",
            events, partitions, keys, producers, txn, policy));
    Table t =
        new Table(
            "run",
            "kind",
            "healthy events",
            "parked → dead",
            "produce s",
            "healthy done s",
            "healthy events/s",
            "all dead-lettered s",
            "statements",
            "pool pings",
            "load 1/5/15");
    for (F1Run r : runs) {
      t.row(
          r.run(),
          r.kind(),
          r.healthy(),
          r.poisoned(),
          f("%.2f", r.produceSeconds()),
          f("%.2f", r.healthySeconds()),
          f("%,.0f", r.healthyRate()),
          Double.isNaN(r.allDeadSeconds()) ? "" : f("%.2f", r.allDeadSeconds()),
          r.statements(),
          r.pings(),
          r.load());
    }
    sb.append(t).append('\n');
    double[] h =
        runs.stream().filter(r -> r.poisoned() == 0).mapToDouble(F1Run::healthyRate).toArray();
    double[] p =
        runs.stream().filter(r -> r.poisoned() > 0).mapToDouble(F1Run::healthyRate).toArray();
    double[] hs =
        runs.stream().filter(r -> r.poisoned() == 0).mapToDouble(F1Run::statements).toArray();
    double[] ps =
        runs.stream().filter(r -> r.poisoned() > 0).mapToDouble(F1Run::statements).toArray();
    int poisoned = runs.stream().mapToInt(F1Run::poisoned).max().orElse(0);
    Table s = new Table("", "healthy runs", "1 % poisoned runs", "ratio");
    s.row(
        "healthy-key throughput, events/s: median (min–max)",
        f("%,.0f (%,.0f–%,.0f)", GfKit.median(h), GfKit.min(h), GfKit.max(h)),
        f("%,.0f (%,.0f–%,.0f)", GfKit.median(p), GfKit.min(p), GfKit.max(p)),
        f("%.2f×", GfKit.median(p) / GfKit.median(h)));
    s.row(
        "statements per run (median)",
        f("%,.0f", GfKit.median(hs)),
        f("%,.0f", GfKit.median(ps)),
        f(
            "+%.1f per parked event",
            poisoned == 0 ? 0 : (GfKit.median(ps) - GfKit.median(hs)) / poisoned));
    sb.append(s).append('\n');
    // Where the extra statements go: last healthy run vs last poisoned run, by statement.
    F1Run lastH = null;
    F1Run lastP = null;
    for (F1Run r : runs) {
      if (r.poisoned() == 0) {
        lastH = r;
      } else {
        lastP = r;
      }
    }
    if (lastH != null && lastP != null) {
      double parkedInP = lastP.poisoned();
      Map<String, long[]> diff = new LinkedHashMap<>();
      for (Map.Entry<String, Long> e : lastH.byLabel().entrySet()) {
        diff.computeIfAbsent(e.getKey(), k -> new long[2])[0] = e.getValue();
      }
      for (Map.Entry<String, Long> e : lastP.byLabel().entrySet()) {
        diff.computeIfAbsent(e.getKey(), k -> new long[2])[1] = e.getValue();
      }
      Table d =
          new Table(
              "thread | statement",
              "healthy run " + lastH.run(),
              "poisoned run " + lastP.run(),
              "difference per parked event");
      diff.entrySet().stream()
          .filter(e -> Math.abs(e.getValue()[1] - e.getValue()[0]) >= Math.max(20, poisoned / 10))
          .sorted(
              (a, b) ->
                  Long.compare(
                      b.getValue()[1] - b.getValue()[0], a.getValue()[1] - a.getValue()[0]))
          .forEach(
              e ->
                  d.row(
                      e.getKey().replace("|", "/"),
                      e.getValue()[0],
                      e.getValue()[1],
                      f("%+.2f", (e.getValue()[1] - e.getValue()[0]) / parkedInP)));
      sb.append("Statements that differ (by at least 20) between the last pair:\n\n")
          .append(d)
          .append('\n');
    }
    return sb.toString();
  }

  // ================================================================== F2
  record Sample(
      double t,
      long published,
      long handled,
      long logRows,
      Map<String, long[]> tables,
      long retentionRuns,
      long retentionDeleted,
      String load) {}

  /** Per table: n_live_tup, n_dead_tup, total bytes, autovacuum_count, n_tup_del, index bytes. */
  static Map<String, long[]> tableStats(Connection c) throws Exception {
    Map<String, long[]> out = new LinkedHashMap<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT relname, n_live_tup, n_dead_tup, pg_total_relation_size(relid),"
                + " autovacuum_count, n_tup_del, pg_indexes_size(relid) FROM pg_stat_user_tables"
                + " WHERE schemaname = ?")) {
      ps.setString(1, GfKit.SCHEMA);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.put(
              rs.getString(1),
              new long[] {
                rs.getLong(2),
                rs.getLong(3),
                rs.getLong(4),
                rs.getLong(5),
                rs.getLong(6),
                rs.getLong(7)
              });
        }
      }
    }
    return out;
  }

  static String f2(GfKit.Options o) throws Exception {
    StringBuilder sb = new StringBuilder();
    String autovacuum;
    try (Connection c = GfKit.BenchDb.maintenanceOf(o);
        var st = c.createStatement();
        var rs = st.executeQuery("SHOW autovacuum")) {
      rs.next();
      autovacuum = rs.getString(1);
    }
    for (int vacuumEvery : o.ints("f2.vacuum", "0,60")) {
      sb.append(f2(o, vacuumEvery, autovacuum)).append('\n');
    }
    return sb.toString();
  }

  static String f2(GfKit.Options o, int vacuumEvery, String autovacuum) throws Exception {
    int rate = o.getInt("f2.rate", 1000);
    int perTxn = o.getInt("f2.txn", 10);
    int seconds = o.getInt("f2.seconds", 120);
    int tail = o.getInt("f2.tail", 35);
    int every = o.getInt("f2.sample", 15);
    int partitions = o.getInt("f2.partitions", 8);
    Duration retention = Duration.ofSeconds(o.getInt("f2.retention", 30));
    Duration interval = Duration.ofSeconds(o.getInt("f2.interval", 5));
    int total = rate * seconds;
    int txns = total / perTxn;
    AtomicIntegerArray seen = new AtomicIntegerArray(total);
    AtomicLong handled = new AtomicLong();
    AtomicLong published = new AtomicLong();
    AtomicReference<String> error = new AtomicReference<>();
    List<Sample> samples = new ArrayList<>();
    TopicName topic = TopicName.of("bench", "f2");
    long maxLate;
    long logAtEnd;
    long outboxAtEnd;
    AtomicLong vacuums = new AtomicLong();
    AtomicLong vacuumNanos = new AtomicLong();
    AtomicLong vacuumMaxNanos = new AtomicLong();
    try (BenchDb db = GfKit.BenchDb.create(o, "f2");
        Connection monitor = db.connect();
        Connection vacuumer = db.connect()) {
      HikariDataSource pool = db.pool("f2", o.getInt("f2.pool", 16), null);
      Boxline boxline =
          Boxline.builder()
              .store(JdbcStore.builder(pool).schema(GfKit.SCHEMA).build())
              .instanceId("f2-main")
              .retentionInterval(interval)
              .build()
              .start();
      try {
        boxline.admin().createNamespace(NamespacePath.of("bench"));
        boxline.admin().createTopic(topic, partitions);
        boxline.admin().setRetention(topic, RetentionPolicy.byAge(retention));
        boxline.admin().createSubscription(SubscriptionSpec.of("f2", topic));
        GfKit.awaitLeader(boxline);
        Consumer consumer =
            boxline
                .consumer("f2")
                .id("f2-c")
                .concurrency(o.getInt("f2.concurrency", 8))
                .handler(
                    (Event e) -> {
                      long idx = GfKit.index(e.id());
                      if (idx < 0 || idx >= total) {
                        error.compareAndSet(null, "unknown event " + e);
                        return;
                      }
                      if (seen.getAndIncrement((int) idx) != 0) {
                        error.compareAndSet(null, "event " + idx + " delivered twice");
                      }
                      handled.incrementAndGet();
                    })
                .start();
        Thread.sleep(1000);
        log(
            "F2 %d events/s (%d per transaction) for %d s, retention %s, retention interval %s,"
                + " sampling every %d s",
            rate, perTxn, seconds, retention, interval, every);
        long start = System.nanoTime() + 100_000_000L;
        AtomicLong next = new AtomicLong();
        AtomicLong late = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> producers = new ArrayList<>();
        for (int t = 0; t < o.getInt("f2.producers", 4); t++) {
          Thread th =
              new Thread(
                  () -> {
                    try {
                      for (long j; (j = next.getAndIncrement()) < txns; ) {
                        long due = start + (long) (j * 1e9 * perTxn / rate);
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                          Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                        } else {
                          late.accumulateAndGet(-wait, Math::max);
                        }
                        List<OutgoingEvent> batch = new ArrayList<>(perTxn);
                        for (int k = 0; k < perTxn; k++) {
                          long i = j * perTxn + k;
                          batch.add(
                              OutgoingEvent.builder(topic)
                                  .id(GfKit.id(i))
                                  .type("bench.event")
                                  .key("key-" + (i % 1000))
                                  .contentType("application/json")
                                  .payload(GfKit.payload(i))
                                  .build());
                        }
                        boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, batch));
                        published.addAndGet(perTxn);
                      }
                    } catch (Throwable e) {
                      failure.compareAndSet(null, e);
                    }
                  },
                  "producer-" + t);
          producers.add(th);
          th.start();
        }
        long stop = start + (long) (seconds + tail) * 1_000_000_000L;
        // Stand-in for autovacuum when the server has it off: a plain VACUUM (ANALYZE) of every
        // Boxline table every vacuumEvery seconds, on a connection of its own.
        Thread vacuum = null;
        if (vacuumEvery > 0) {
          StringBuilder tables = new StringBuilder();
          for (String t : GfKit.TABLES) {
            tables
                .append(tables.length() == 0 ? "" : ", ")
                .append(GfKit.SCHEMA)
                .append('.')
                .append(t);
          }
          String sql = "VACUUM (ANALYZE) " + tables;
          vacuum =
              new Thread(
                  () -> {
                    try (var st = vacuumer.createStatement()) {
                      for (long due = start + vacuumEvery * 1_000_000_000L;
                          due < stop;
                          due += vacuumEvery * 1_000_000_000L) {
                        Thread.sleep(Math.max(0, (due - System.nanoTime()) / 1_000_000));
                        long v0 = System.nanoTime();
                        st.execute(sql);
                        long d = System.nanoTime() - v0;
                        vacuums.incrementAndGet();
                        vacuumNanos.addAndGet(d);
                        vacuumMaxNanos.accumulateAndGet(d, Math::max);
                      }
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    } catch (Exception e) {
                      failure.compareAndSet(null, e);
                    }
                  },
                  "bench-vacuum");
          vacuum.setDaemon(true);
          vacuum.start();
        }
        for (long s = start; s <= stop; s += every * 1_000_000_000L) {
          Thread.sleep(Math.max(0, (s - System.nanoTime()) / 1_000_000));
          long logRows = db.queryLong("SELECT count(*) FROM " + GfKit.SCHEMA + ".log");
          Sample smp =
              new Sample(
                  (System.nanoTime() - start) / 1e9,
                  published.get(),
                  handled.get(),
                  logRows,
                  tableStats(monitor),
                  boxline.stats().retentionRuns(),
                  boxline.stats().retentionDeleted(),
                  GfKit.load());
          samples.add(smp);
          long[] lg = smp.tables().get("log");
          log(
              "F2 t=%3.0f s: published %d, handled %d, log rows %d (live %d, dead %d, %d kB,"
                  + " autovacuums %d), retention deleted %d; load %s",
              smp.t(),
              smp.published(),
              smp.handled(),
              logRows,
              lg[0],
              lg[1],
              lg[2] / 1024,
              lg[3],
              smp.retentionDeleted(),
              smp.load());
          check(failure.get() == null, "F2 producer failed: " + failure.get());
          check(error.get() == null, "F2: " + error.get());
        }
        for (Thread th : producers) {
          th.join();
        }
        if (vacuum != null) {
          vacuum.join();
        }
        maxLate = late.get();
        check(failure.get() == null, "F2 producer failed: " + failure.get());
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (handled.get() < total) {
          check(
              System.nanoTime() < deadline,
              "F2: " + handled.get() + " of " + total + " events handled");
          Thread.sleep(50);
        }
        Thread.sleep(500);
        check(error.get() == null, "F2: " + error.get());
        for (int i = 0; i < total; i++) {
          check(seen.get(i) == 1, "F2: event " + i + " handled " + seen.get(i) + " times");
        }
        check(
            consumer.handledCount() == total,
            "F2: handledCount " + consumer.handledCount() + ", expected " + total);
        consumer.close();
        logAtEnd = db.queryLong("SELECT count(*) FROM " + GfKit.SCHEMA + ".log");
        outboxAtEnd = db.queryLong("SELECT count(*) FROM " + GfKit.SCHEMA + ".outbox");
        check(outboxAtEnd == 0, "F2: " + outboxAtEnd + " rows left in the outbox");
        // Bounded: the log never held much more than retention + interval (+ slack) of events.
        long bound = (long) rate * (retention.toSeconds() + interval.toSeconds() + 20);
        for (Sample smp : samples) {
          check(
              smp.logRows() <= bound,
              f("F2: log held %d rows at t=%.0f s, more than %d", smp.logRows(), smp.t(), bound));
        }
      } finally {
        boxline.close();
      }
    }
    return f2Report(
        vacuumEvery,
        autovacuum,
        vacuums.get(),
        vacuumNanos.get(),
        vacuumMaxNanos.get(),
        samples,
        rate,
        perTxn,
        seconds,
        tail,
        retention,
        interval,
        partitions,
        total,
        maxLate,
        logAtEnd);
  }

  private static String f2Report(
      int vacuumEvery,
      String autovacuum,
      long vacuums,
      long vacuumNanos,
      long vacuumMaxNanos,
      List<Sample> samples,
      int rate,
      int perTxn,
      int seconds,
      int tail,
      Duration retention,
      Duration interval,
      int partitions,
      int total,
      long maxLate,
      long logAtEnd) {
    StringBuilder sb =
        new StringBuilder(
            vacuumEvery == 0
                ? "## F2 — bloat under retention, server as configured (autovacuum = "
                    + autovacuum
                    + ")\n\n"
                : "## F2 — bloat under retention, with a VACUUM (ANALYZE) of the Boxline tables"
                    + " every "
                    + vacuumEvery
                    + " s (stand-in for autovacuum; server autovacuum = "
                    + autovacuum
                    + ")\n\n");
    if (vacuumEvery > 0) {
      sb.append(
          f(
              "The benchmark ran VACUUM (ANALYZE) on the ten Boxline tables %d times, %.0f ms on"
                  + " average, %.0f ms at most.%n%n",
              vacuums, vacuums == 0 ? 0 : vacuumNanos / 1e6 / vacuums, vacuumMaxNanos / 1e6));
    }
    sb.append(
        f(
            "Topic of %d partitions with RetentionPolicy.byAge(%ds), Boxline.builder()"
                + ".retentionInterval(%ds); %d events/s (%d per transaction, paced open-loop by 4"
                + " producer threads with boxline.inTransaction) for %d s = %,d events, then %d s"
                + " with no load; one consumer (concurrency 8) keeps up. Every %s s: exact row count"
                + " of the log, and n_live_tup / n_dead_tup / pg_total_relation_size /"
                + " autovacuum_count from pg_stat_user_tables (server settings untouched). Latest"
                + " producer transaction started %.0f ms late. Log rows left at the end: %d.%n%n",
            partitions,
            retention.toSeconds(),
            interval.toSeconds(),
            rate,
            perTxn,
            seconds,
            total,
            tail,
            samples.size() > 1 ? f("%.0f", samples.get(1).t() - samples.get(0).t()) : "?",
            maxLate / 1e6,
            logAtEnd));
    Table t =
        new Table(
            "t s",
            "published",
            "handled",
            "log rows",
            "log live / dead tuples",
            "log total kB (indexes)",
            "log autovacuums",
            "outbox live / dead",
            "outbox kB",
            "outbox autovacuums",
            "retention deleted",
            "load 1 min");
    for (Sample s : samples) {
      long[] lg = s.tables().getOrDefault("log", new long[6]);
      long[] ob = s.tables().getOrDefault("outbox", new long[6]);
      t.row(
          f("%.0f", s.t()),
          s.published(),
          s.handled(),
          s.logRows(),
          lg[0] + " / " + lg[1],
          lg[2] / 1024 + " (" + lg[5] / 1024 + ")",
          lg[3],
          ob[0] + " / " + ob[1],
          ob[2] / 1024,
          ob[3],
          s.retentionDeleted(),
          s.load().split(" ")[0]);
    }
    sb.append(t).append('\n');
    List<String> small = new ArrayList<>(GfKit.TABLES);
    small.remove("log");
    small.remove("outbox");
    String[] header = new String[small.size() + 1];
    header[0] = "t s";
    for (int i = 0; i < small.size(); i++) {
      header[i + 1] = small.get(i) + " kB (dead, autovac)";
    }
    Table u = new Table(header);
    for (Sample s : samples) {
      Object[] row = new Object[header.length];
      row[0] = f("%.0f", s.t());
      for (int i = 0; i < small.size(); i++) {
        long[] v = s.tables().getOrDefault(small.get(i), new long[6]);
        row[i + 1] = v[2] / 1024 + " (" + v[1] + ", " + v[3] + ")";
      }
      u.row(row);
    }
    sb.append("Smaller tables (total kB, dead tuples, autovacuum runs):\n\n")
        .append(u)
        .append('\n');
    // Plateau: compare the second half of the load with the first half.
    Sample mid = null;
    Sample endLoad = null;
    for (Sample s : samples) {
      if (s.t() <= seconds / 2.0 + 1) {
        mid = s;
      }
      if (s.t() <= seconds + 1) {
        endLoad = s;
      }
    }
    if (mid != null && endLoad != null) {
      long m = mid.tables().get("log")[2];
      long e = endLoad.tables().get("log")[2];
      long maxDead = 0;
      long maxRows = 0;
      for (Sample s : samples) {
        maxDead = Math.max(maxDead, s.tables().get("log")[1]);
        maxRows = Math.max(maxRows, s.logRows());
      }
      sb.append(
          f(
              "Log total size at t=%.0f s (half the load): %d kB; at t=%.0f s (end of the load):"
                  + " %d kB (×%.2f; linear growth would be ×2). Largest log row count %d (%.1f s"
                  + " of events), largest dead-tuple count %d. Plateau → %s.%n",
              mid.t(),
              m / 1024,
              endLoad.t(),
              e / 1024,
              (double) e / m,
              maxRows,
              maxRows / (double) rate,
              maxDead,
              e <= 1.5 * m ? "pass" : "FAIL"));
    }
    return sb.toString();
  }
}
