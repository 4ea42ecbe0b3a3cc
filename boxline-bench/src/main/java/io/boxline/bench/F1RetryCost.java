package io.boxline.bench;

import static io.boxline.bench.Bench.log;
import static io.boxline.bench.BenchFailure.check;
import static io.boxline.bench.Stats.f;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.OutgoingEvent;
import io.boxline.RetryPolicy;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

/**
 * F1, what the retry store costs (issue 4): end-to-end throughput of healthy keys with no failures
 * vs. with 1 % of the keys poisoned (every event of theirs fails and is parked, retried and
 * dead-lettered), and the statements it costs per parked event. Runs in a database of its own
 * ({@link BenchDb}).
 */
final class F1RetryCost {
  private F1RetryCost() {}

  private static final Workload.Definition DEF = Workload.define("f1", Bench.Suite.FAILURES);

  static final Opt<Integer> EVENTS = DEF.integer("events", 50_000, "events per run");
  static final Opt<Integer> KEYS = DEF.integer("keys", 1000, "keys");
  static final Opt<Integer> PARTITIONS = DEF.partitions(4);
  static final Opt<Integer> RUNS =
      DEF.integer("runs", 3, "healthy/poisoned pairs, after a warm-up pair");
  static final Opt<Integer> PRODUCERS = DEF.producers(2);
  static final Opt<Integer> TXN = DEF.txn(100);
  static final Opt<Integer> POOL = DEF.pool(16);
  static final Opt<Boolean> TRACE =
      DEF.flag("trace", false, "print statements per thread and the due-parked plans");

  static final Workload WORKLOAD =
      DEF.runs(
          "what the retry store costs: healthy keys with and without 1 % of the keys poisoned",
          F1RetryCost::run);

  /** One measured run, healthy or with 1 % of the keys poisoned. */
  record Trial(
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

  static String run(Run bench) throws Exception {
    Options o = bench.o();
    int events = o.get(EVENTS);
    int keys = o.get(KEYS);
    int partitions = o.get(PARTITIONS);
    int pairs = o.get(RUNS);
    int producers = o.get(PRODUCERS);
    int txn = o.get(TXN);
    RetryPolicy policy =
        RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(50))
            .inPlaceAttempts(1)
            .maxAttempts(3);
    List<Trial> runs = new ArrayList<>();
    try (BenchDb db = BenchDb.create(bench, "f1");
        Connection maintenance = db.maintenance()) {
      Probe probe = new Probe(GfKit.SCHEMA);
      HikariDataSource pool = db.pool("f1", o.get(POOL), probe);
      Boxline boxline = GfKit.start(GfKit.builder(pool, "f1-main"), null, 0);
      try {
        int run = 0;
        // A warm-up pair (not reported), then alternating healthy / poisoned runs.
        for (int pair = 0; pair <= pairs; pair++) {
          for (boolean poison : new boolean[] {false, true}) {
            Trial r =
                trial(
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
                    o.get(TRACE));
            if (pair > 0) {
              runs.add(r);
            }
          }
        }
      } finally {
        boxline.close();
      }
    }
    return report(runs, events, keys, partitions, producers, txn, policy);
  }

  private static Trial trial(
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
    Workers workers =
        new Workers()
            .start(
                producers,
                me -> {
                  List<OutgoingEvent> batch = new ArrayList<>(txn);
                  for (int i = 0; i < events; i++) {
                    if ((i % keys) % producers != me) {
                      continue;
                    }
                    batch.add(GfKit.event(topic, i, "key-" + (i % keys)));
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
                });
    workers.await();
    long produced = System.nanoTime();
    check(!workers.failed(), "F1 producer failed: " + workers.failure());
    String what = "F1 run " + run + (poison ? " (1 % poisoned)" : " (healthy)");
    long deadline = System.nanoTime() + 300_000_000_000L;
    while (healthyDone.get() == 0 || (poisonedTotal > 0 && poisonDone.get() == 0)) {
      if (error.get() != null) {
        break;
      }
      if (System.nanoTime() > deadline) {
        consumer.close();
        throw new BenchFailure(
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
    String load = Noise.loadAverages();
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
    Trial r =
        new Trial(
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

  private static String report(
      List<Trial> runs,
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
    for (Trial r : runs) {
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
        runs.stream().filter(r -> r.poisoned() == 0).mapToDouble(Trial::healthyRate).toArray();
    double[] p =
        runs.stream().filter(r -> r.poisoned() > 0).mapToDouble(Trial::healthyRate).toArray();
    double[] hs =
        runs.stream().filter(r -> r.poisoned() == 0).mapToDouble(Trial::statements).toArray();
    double[] ps =
        runs.stream().filter(r -> r.poisoned() > 0).mapToDouble(Trial::statements).toArray();
    int poisoned = runs.stream().mapToInt(Trial::poisoned).max().orElse(0);
    Table s = new Table("", "healthy runs", "1 % poisoned runs", "ratio");
    s.row(
        "healthy-key throughput, events/s: median (min–max)",
        f("%,.0f (%,.0f–%,.0f)", Stats.median(h), Stats.min(h), Stats.max(h)),
        f("%,.0f (%,.0f–%,.0f)", Stats.median(p), Stats.min(p), Stats.max(p)),
        f("%.2f×", Stats.median(p) / Stats.median(h)));
    s.row(
        "statements per run (median)",
        f("%,.0f", Stats.median(hs)),
        f("%,.0f", Stats.median(ps)),
        f(
            "+%.1f per parked event",
            poisoned == 0 ? 0 : (Stats.median(ps) - Stats.median(hs)) / poisoned));
    sb.append(s).append('\n');
    // Where the extra statements go: last healthy run vs last poisoned run, by statement.
    Trial lastH = null;
    Trial lastP = null;
    for (Trial r : runs) {
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
}
