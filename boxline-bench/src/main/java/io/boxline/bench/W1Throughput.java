package io.boxline.bench;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.Partitioner;
import io.boxline.Publisher;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.bench.DeliveryCheck.BenchFailure;
import io.boxline.jdbc.JdbcStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;

/**
 * W1: producer throughput with Boxline end to end, against raw inserts of the same rows.
 *
 * <p>Each producer transaction inserts one business row and {@code txnSize} events. Boxline: the
 * events are published with {@link Publisher#publish}/{@link Publisher#publishAll} in the caller's
 * transaction; the time runs from the first insert to the moment the no-op handler has seen the
 * last event. Baseline: the same transaction inserts the business row and the same event rows (same
 * columns as Boxline's outbox, same statement shape: one INSERT for one event, one INSERT ...
 * SELECT FROM unnest(arrays) for several on PostgreSQL, one multi-row INSERT on MariaDB) into a
 * plain table; the time runs until the last commit. The SQL is {@link BenchDatabase}'s.
 */
final class W1Throughput {
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

  private final Bench.Options o;
  private final Db db;
  private final DataSource pool;
  private final String runSchema;
  private int trialCounter;

  W1Throughput(Bench.Options o, Db db, DataSource pool, String runSchema) {
    this.o = o;
    this.db = db;
    this.pool = pool;
    this.runSchema = runSchema;
  }

  List<Trial> run() throws Exception {
    List<Trial> trials = new ArrayList<>();
    for (int txnSize : o.w1TxnSizes) {
      // Warm-up of both paths (JIT, pool, caches); not reported.
      int warm = Math.min(o.w1Events, o.w1WarmupEvents);
      Bench.log("W1 T=%d warm-up (%d events each)", txnSize, warm);
      baseline(txnSize, warm, 0);
      boxline(txnSize, warm, 0);
      for (int run = 1; run <= o.w1Runs; run++) {
        Trial b = baseline(txnSize, o.w1Events, run);
        trials.add(b);
        Bench.log(
            "W1 T=%d run %d baseline: %s events/s (%.2f s)",
            txnSize, run, Stats.rate(b.eventsPerSecond()), b.seconds());
        Trial x = boxline(txnSize, o.w1Events, run);
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
    String s = runSchema;
    BenchDatabase kind = db.kind;
    db.exec(
        "DROP TABLE IF EXISTS " + s + ".bench_order",
        "DROP TABLE IF EXISTS " + s + ".plain_event",
        kind.businessDdl(s),
        kind.plainEventDdl(s));
    String business = kind.businessInsert(s);
    String insert = kind.plainInsert(s, txnSize);
    int partitions = o.partitions;
    Partitioner partitioner = Partitioner.kafkaCompatible();
    String waited = run > 0 ? Bench.quiet(o) : "";
    Noise noise = Noise.start();
    long[] times =
        produce(
            txnSize,
            events,
            (c, first, keys) -> {
              insertBusiness(c, business, first);
              int[] parts = new int[keys.length];
              for (int i = 0; i < keys.length; i++) {
                parts[i] = partitioner.partition(keys[i], partitions);
              }
              kind.insertPlainEvents(c, insert, first, keys, parts);
            });
    double seconds = (times[1] - times[0]) / 1e9;
    String load = join(noise.since(), waited);
    long stored = db.queryLong("SELECT count(*) FROM " + s + ".plain_event");
    long orders = db.queryLong("SELECT count(*) FROM " + s + ".bench_order");
    if (stored != events || orders != events / txnSize) {
      throw new BenchFailure(
          "W1 baseline: "
              + stored
              + " event rows and "
              + orders
              + " business rows, expected "
              + events
              + " and "
              + events / txnSize);
    }
    return new Trial("baseline", txnSize, run, events, seconds, seconds, load);
  }

  // ------------------------------------------------------------------ Boxline
  private Trial boxline(int txnSize, int events, int run) throws Exception {
    String schema = runSchema + "_w1_" + (++trialCounter);
    TopicName topic = TopicName.of("bench", "events");
    int keys = o.w1Threads * KEYS_PER_PRODUCER;
    DeliveryCheck check = new DeliveryCheck(events, o.partitions, keys, DeliveryCheck.Clock.NONE);
    String what = "W1 T=" + txnSize + " run " + run;
    Probe probe = o.w1Trace && run > 0 ? new Probe(schema) : null;
    DataSource ds = probe == null ? pool : probe.wrap(pool);
    Boxline boxline =
        Boxline.builder().store(JdbcStore.builder(ds).schema(schema).build()).build().start();
    try {
      boxline.admin().createNamespace(NamespacePath.of("bench"));
      boxline.admin().createTopic(topic, o.partitions, o.sequencing);
      boxline.admin().createSubscription(SubscriptionSpec.of("bench-sub", topic));
      db.exec(db.kind.businessDdl(schema));
      Bench.awaitLeader(boxline);
      Consumer consumer =
          boxline
              .consumer("bench-sub")
              .handler(check)
              .concurrency(o.w1ConsumerConcurrency)
              .batchSize(o.w1ConsumerBatch)
              .start();
      Publisher publisher = boxline.publisher();
      if (probe != null) {
        probe.reset();
      }
      String business = db.kind.businessInsert(schema);
      String waited = run > 0 ? Bench.quiet(o) : "";
      Noise noise = Noise.start();
      long[] times =
          produce(
              txnSize,
              events,
              (c, first, eventKeys) -> {
                insertBusiness(c, business, first);
                if (eventKeys.length == 1) {
                  publisher.publish(c, event(topic, first, eventKeys[0]));
                } else {
                  List<OutgoingEvent> list = new ArrayList<>(eventKeys.length);
                  for (int i = 0; i < eventKeys.length; i++) {
                    list.add(event(topic, first + i, eventKeys[i]));
                  }
                  publisher.publishAll(c, list);
                }
              },
              o.w1Managed ? boxline : null);
      long producedAt = times[1];
      check.await(Math.max(120, 20L * (producedAt - times[0]) / 1_000_000_000L), what);
      long end = check.doneNanos();
      String load = join(noise.since(), waited);
      Thread.sleep(500); // late duplicates would show up here
      check.verify(what, consumer.handledCount());
      consumer.close();
      if (probe != null) {
        probe.enabled(false);
        System.out.println(Report.trace(probe.snapshot(), events));
      }
      long logged = db.queryLong("SELECT count(*) FROM " + schema + ".log");
      long left = db.queryLong("SELECT count(*) FROM " + schema + ".outbox");
      long orders = db.queryLong("SELECT count(*) FROM " + schema + ".bench_order");
      if (logged != events || left != 0 || orders != events / txnSize) {
        throw new BenchFailure(
            what
                + ": log holds "
                + logged
                + " events, outbox "
                + left
                + ", business rows "
                + orders
                + "; expected "
                + events
                + ", 0, "
                + events / txnSize);
      }
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

  static String join(String a, String b) {
    return b.isEmpty() ? a : a + "; " + b;
  }

  private static OutgoingEvent event(TopicName topic, long index, String key) {
    return OutgoingEvent.builder(topic)
        .id(Payloads.id(index))
        .type("order.placed")
        .key(key)
        .contentType("application/json")
        .payload(Payloads.payload(index))
        .build();
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
    /** Writes the rows of one transaction: events first .. first + keys.length - 1. */
    void write(Connection c, long first, String[] keys) throws SQLException;
  }

  /**
   * Runs the producer threads: thread t commits transactions t, t + threads, ... Each thread owns
   * keys of its own, so the per-key order it produces is checkable at the consumer. Returns the
   * System.nanoTime() at start and after the last commit.
   */
  long[] produce(int txnSize, int events, TxnBody body) throws Exception {
    return produce(txnSize, events, body, null);
  }

  /**
   * With {@code managedBy}, each transaction runs through its {@code inTransaction} (the same pool)
   * instead of a connection the producer commits itself.
   */
  long[] produce(int txnSize, int events, TxnBody body, Boxline managedBy) throws Exception {
    int threads = o.w1Threads;
    int txns = events / txnSize;
    if (txns * txnSize != events) {
      throw new IllegalArgumentException(
          events + " events do not divide into transactions of " + txnSize);
    }
    CountDownLatch start = new CountDownLatch(1);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int me = t;
      Thread w =
          new Thread(
              () -> {
                SplittableRandom rnd = new SplittableRandom(42 + me);
                String[] keys = new String[txnSize];
                try {
                  start.await();
                  for (int txn = me; txn < txns && failure.get() == null; txn += threads) {
                    for (int i = 0; i < txnSize; i++) {
                      keys[i] = "customer-" + (me + threads * rnd.nextInt(KEYS_PER_PRODUCER));
                    }
                    long first = (long) txn * txnSize;
                    if (managedBy != null) {
                      managedBy.inTransaction(
                          tx -> {
                            body.write(tx, first, keys);
                            return null;
                          });
                      continue;
                    }
                    try (Connection c = pool.getConnection()) {
                      c.setAutoCommit(false);
                      try {
                        body.write(c, first, keys);
                        c.commit();
                      } catch (SQLException | RuntimeException e) {
                        c.rollback();
                        throw e;
                      }
                    }
                  }
                } catch (Throwable e) {
                  failure.compareAndSet(null, e);
                }
              },
              "producer-" + t);
      workers.add(w);
      w.start();
    }
    long t0 = System.nanoTime();
    start.countDown();
    for (Thread w : workers) {
      w.join();
    }
    long t1 = System.nanoTime();
    if (failure.get() != null) {
      throw new BenchFailure("W1 producer failed: " + failure.get());
    }
    return new long[] {t0, t1};
  }
}
