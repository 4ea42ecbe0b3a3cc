package io.boxline.bench;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.OutgoingEvent;
import io.boxline.Partitioner;
import io.boxline.Publisher;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import javax.sql.DataSource;

/**
 * W1: producer throughput with Boxline end to end, against raw inserts of the same rows.
 *
 * <p>Each producer transaction inserts one business row and {@code txnSize} events. Boxline: the
 * events are published with {@link Publisher#publish}/{@link Publisher#publishAll} in the caller's
 * transaction; the time runs from the first insert to the moment the no-op handler has seen the
 * last event. Baseline: the same transaction inserts the business row and the same event rows (same
 * columns as Boxline's outbox, same statement shape: one INSERT for one event, one INSERT ...
 * SELECT FROM unnest(arrays) for several) into a plain table; the time runs until the last commit.
 * The SQL is {@link Db}'s.
 */
final class W1Throughput extends Trials {
  static final int KEYS_PER_PRODUCER = 256;

  /** One measured trial. */
  record Trial(
      String system,
      int txnSize,
      int run,
      int events,
      double seconds,
      double produceSeconds,
      String noise) {
    double eventsPerSecond() {
      return events / seconds;
    }
  }

  private static final Workload.Definition DEF = Workload.define("w1", Bench.Suite.W);

  static final Opt<Integer> EVENTS = DEF.integer("events", 50_000, "events per measured run");
  static final Opt<Integer> WARMUP =
      DEF.integer("warmup", 5_000, "events of the warm-up run (not reported)");
  static final Opt<Integer> THREADS = DEF.integer("threads", 4, "producer threads");
  static final Opt<Integer> RUNS = DEF.integer("runs", 3, "runs per configuration");
  static final Opt<int[]> TXN = DEF.ints("txn", "1,10", "events per transaction (a list)");
  static final Opt<Integer> CONCURRENCY = DEF.integer("concurrency", 8, "consumer concurrency");
  static final Opt<Integer> BATCH = DEF.integer("batch", 100, "consumer batch size");

  static final Workload WORKLOAD =
      DEF.runs(
          "producer throughput, Boxline end to end against raw inserts of the same rows",
          run ->
              onPool(
                  run, "bench-w1", pool -> Report.w1(run.o(), new W1Throughput(run, pool).run())));

  W1Throughput(Run run, DataSource pool) {
    super(run, pool, "w1");
  }

  List<Trial> run() throws Exception {
    List<Trial> trials = new ArrayList<>();
    int events = o.get(EVENTS);
    for (int txnSize : o.get(TXN)) {
      // Warm-up of both paths (JIT, pool, caches); not reported.
      int warm = Math.min(events, o.get(WARMUP));
      Bench.log("W1 T=%d warm-up (%d events each)", txnSize, warm);
      baseline(txnSize, warm, 0);
      boxline(txnSize, warm, 0);
      for (int run = 1; run <= o.get(RUNS); run++) {
        Trial b = baseline(txnSize, events, run);
        trials.add(b);
        Bench.log(
            "W1 T=%d run %d baseline: %s events/s (%.2f s)",
            txnSize, run, Stats.rate(b.eventsPerSecond()), b.seconds());
        Trial x = boxline(txnSize, events, run);
        trials.add(x);
        Bench.log(
            "W1 T=%d run %d boxline : %s events/s end to end (%.2f s; producers done after %.2f s)",
            txnSize, run, Stats.rate(x.eventsPerSecond()), x.seconds(), x.produceSeconds());
      }
    }
    return trials;
  }

  // ------------------------------------------------------------------ baseline
  private Trial baseline(int txnSize, int events, int run) throws Exception {
    String s = this.run.schema();
    db.exec(
        "DROP TABLE IF EXISTS " + s + ".bench_order",
        "DROP TABLE IF EXISTS " + s + ".plain_event",
        String.format(Db.BUSINESS_DDL, s),
        String.format(Db.PLAIN_EVENT_DDL, s));
    String business = Db.businessInsert(s);
    Partitioner partitioner = Partitioner.kafkaCompatible();
    TxnBody plainRows =
        (c, first, keys) -> {
          int[] parts = new int[keys.length];
          for (int i = 0; i < keys.length; i++) {
            parts[i] = partitioner.partition(keys[i], partitions);
          }
          Db.insertPlainEvents(c, s, first, keys, parts);
        };
    Noise machine = watch(run > 0);
    long[] times = produce(txnSize, events, business, plainRows);
    double seconds = (times[1] - times[0]) / 1e9;
    String load = machine.since();
    long stored = db.queryLong("SELECT count(*) FROM " + s + ".plain_event");
    long orders = db.queryLong("SELECT count(*) FROM " + s + ".bench_order");
    BenchFailure.check(
        stored == events && orders == events / txnSize,
        Stats.f("W1 baseline: %d events, %d business rows; expected %d", stored, orders, events));
    return new Trial("baseline", txnSize, run, events, seconds, seconds, load);
  }

  // ------------------------------------------------------------------ Boxline
  private Trial boxline(int txnSize, int events, int run) throws Exception {
    String schema = nextSchema();
    TopicName topic = TopicName.of("bench", "events");
    int keys = o.get(THREADS) * KEYS_PER_PRODUCER;
    DeliveryCheck check = new DeliveryCheck(events, partitions, keys, DeliveryCheck.Clock.NONE);
    String what = "W1 T=" + txnSize + " run " + run;
    Boxline boxline =
        start(Boxline.builder().store(JdbcStore.builder(pool).schema(schema).build()), topic);
    try {
      db.exec(String.format(Db.BUSINESS_DDL, schema));
      Consumer consumer =
          consumer(boxline, check, o.get(CONCURRENCY)).batchSize(o.get(BATCH)).start();
      Publisher publisher = boxline.publisher();
      String business = Db.businessInsert(schema);
      TxnBody publish =
          (c, first, eventKeys) -> {
            if (eventKeys.length == 1) {
              publisher.publish(c, Payloads.event(topic, first, eventKeys[0]));
            } else {
              List<OutgoingEvent> list = new ArrayList<>(eventKeys.length);
              for (int i = 0; i < eventKeys.length; i++) {
                list.add(Payloads.event(topic, first + i, eventKeys[i]));
              }
              publisher.publishAll(c, list);
            }
          };
      Noise machine = watch(run > 0);
      long[] times = produce(txnSize, events, business, publish);
      long producedAt = times[1];
      check.await(Math.max(120, 20L * (producedAt - times[0]) / 1_000_000_000L), what);
      long end = check.doneNanos();
      String load = machine.since();
      Thread.sleep(500); // late duplicates would show up here
      check.verify(what, consumer.handledCount());
      consumer.close();
      long logged = db.queryLong("SELECT count(*) FROM " + schema + ".log");
      long left = db.queryLong("SELECT count(*) FROM " + schema + ".outbox");
      long orders = db.queryLong("SELECT count(*) FROM " + schema + ".bench_order");
      BenchFailure.check(
          logged == events && left == 0 && orders == events / txnSize,
          Stats.f("%s: log %d, outbox %d, business rows %d", what, logged, left, orders));
      return new Trial(
          "boxline",
          txnSize,
          run,
          events,
          (end - times[0]) / 1e9,
          (producedAt - times[0]) / 1e9,
          load);
    } finally {
      boxline.close();
      db.dropSchema(schema);
    }
  }

  private static void insertBusiness(Connection c, String sql, long index) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, "customer-" + (index % 977));
      ps.setLong(2, 1000 + index % 90000);
      ps.executeUpdate();
    }
  }

  // ------------------------------------------------------------------ producers
  @FunctionalInterface
  interface TxnBody {
    /**
     * Writes the events of one transaction, first .. first + keys.length - 1 (after its business
     * row).
     */
    void write(Connection c, long first, String[] keys) throws SQLException;
  }

  /**
   * Runs the producer threads: thread t commits transactions t, t + threads, ... Each thread owns
   * keys of its own, so the per-key order it produces is checkable at the consumer. Every
   * transaction inserts one business row ({@code businessInsert}) and then its events ({@code
   * body}). Returns the System.nanoTime() at start and after the last commit.
   */
  long[] produce(int txnSize, int events, String businessInsert, TxnBody body) throws Exception {
    int threads = o.get(THREADS);
    int txns = events / txnSize;
    if (txns * txnSize != events) {
      throw new IllegalArgumentException(
          events + " events do not divide into transactions of " + txnSize);
    }
    CountDownLatch start = new CountDownLatch(1);
    Workers workers = new Workers();
    workers.start(
        threads,
        me -> {
          SplittableRandom rnd = new SplittableRandom(42 + me);
          String[] keys = new String[txnSize];
          start.await();
          for (int txn = me; txn < txns && !workers.failed(); txn += threads) {
            for (int i = 0; i < txnSize; i++) {
              keys[i] = "customer-" + (me + threads * rnd.nextInt(KEYS_PER_PRODUCER));
            }
            long first = (long) txn * txnSize;
            try (Connection c = pool.getConnection()) {
              c.setAutoCommit(false);
              try {
                insertBusiness(c, businessInsert, first);
                body.write(c, first, keys);
                c.commit();
              } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
              }
            }
          }
        });
    long t0 = System.nanoTime();
    start.countDown();
    workers.await();
    long t1 = System.nanoTime();
    if (workers.failed()) {
      throw new BenchFailure("W1 producer failed: " + workers.failure());
    }
    return new long[] {t0, t1};
  }
}
