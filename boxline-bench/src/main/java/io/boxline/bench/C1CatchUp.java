package io.boxline.bench;

import static io.boxline.bench.Bench.log;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.OutgoingEvent;
import io.boxline.Sequencing;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * C1, catch-up: a subscription far behind (a million events by default) drains while producers go
 * on publishing to another topic with a subscription of its own. Measured in one run: how fast a
 * plain paged {@code SELECT} of the same log rows reads them (the floor any consumer stands on),
 * how fast the subscription catches up, and the live subscription's commit → handler latency before
 * and during the catch-up.
 */
final class C1CatchUp {
  private C1CatchUp() {}

  private static final Workload.Definition DEF = Workload.define("c1", Bench.Suite.GROUPS);

  static final Opt<Integer> EVENTS = DEF.integer("events", 1_000_000, "the backlog, in events");
  static final Opt<Integer> PARTITIONS = DEF.partitions(8);
  static final Opt<Integer> BATCH = DEF.integer("batch", 100, "consumer batch and SELECT page");
  static final Opt<Integer> LIVE_RATE =
      DEF.integer("live-rate", 200, "events/s published to the live topic throughout");
  static final Opt<Integer> WINDOW =
      DEF.integer("window", 20, "seconds of live latency measured before the catch-up");
  static final Opt<Integer> POOL = DEF.pool(24);

  static final Workload WORKLOAD =
      DEF.runs(
          "a subscription a million events behind drains, beside a plain SELECT of the same rows,"
              + " with live traffic",
          C1CatchUp::run);

  static String run(Run run) throws Exception {
    Options o = run.o();
    int events = o.get(EVENTS);
    int partitions = o.get(PARTITIONS);
    TopicName backlog = TopicName.of("bench", "backlog");
    TopicName live = TopicName.of("bench", "live");
    try (BenchDb db = BenchDb.create(run, "c1")) {
      HikariDataSource pool = db.pool("c1", o.get(POOL), null);
      Boxline boxline = GfKit.start(GfKit.builder(pool, "c1-main"), null, 0);
      try {
        boxline.admin().createTopic(backlog, partitions, Sequencing.IN_TRANSACTION);
        boxline.admin().createTopic(live, 4);
        boxline.admin().createSubscription(SubscriptionSpec.of("live", live));
        long t0 = System.nanoTime();
        load(boxline, backlog, events);
        log("C1 loaded %,d events in %.1f s", events, (System.nanoTime() - t0) / 1e9);

        LiveTraffic traffic = new LiveTraffic(boxline, live, o.get(LIVE_RATE));
        traffic.start();
        try {
          traffic.measure();
          Thread.sleep(o.get(WINDOW) * 1000L); // the window measured, not a synchronisation
          long[] before = traffic.measure();

          double selectSeconds = plainSelect(db, backlog, partitions, o.get(BATCH), events);
          long[] duringSelect = traffic.measure();
          log("C1 plain SELECT: %,d rows in %.2f s", events, selectSeconds);

          boxline.admin().createSubscription(SubscriptionSpec.of("catch-up", backlog));
          long start = System.nanoTime();
          Consumer catchUp =
              boxline.consumer("catch-up").batchSize(o.get(BATCH)).handler(e -> {}).start();
          long lastLog = start;
          while (catchUp.handledCount() < events) {
            Thread.sleep(20); // a workload waiting for its backlog, not a test synchronising
            if (System.nanoTime() - lastLog > 5_000_000_000L) {
              lastLog = System.nanoTime();
              log(
                  "C1 catch-up: %,d of %,d (%.0f%%)",
                  catchUp.handledCount(), events, 100.0 * catchUp.handledCount() / events);
            }
          }
          double catchUpSeconds = (System.nanoTime() - start) / 1e9;
          long[] during = traffic.measure();
          catchUp.close();
          log("C1 catch-up: %,d events in %.2f s", events, catchUpSeconds);
          return report(
              o,
              events,
              partitions,
              selectSeconds,
              catchUpSeconds,
              before,
              duringSelect,
              during,
              traffic);
        } finally {
          traffic.close();
        }
      } finally {
        boxline.close();
      }
    }
  }

  /** Threads named {@code prefix-<n>}. */
  private static java.util.concurrent.ThreadFactory named(String prefix) {
    AtomicLong n = new AtomicLong();
    return r -> new Thread(r, prefix + "-" + n.incrementAndGet());
  }

  /** The backlog, published in transactions of 1,000 by four threads. */
  private static void load(Boxline boxline, TopicName topic, int events) throws Exception {
    ExecutorService loaders = Executors.newFixedThreadPool(4, named("c1-load"));
    try {
      List<Future<?>> done = new ArrayList<>();
      AtomicLong next = new AtomicLong();
      for (int t = 0; t < 4; t++) {
        done.add(
            loaders.submit(
                () -> {
                  long from;
                  while ((from = next.getAndAdd(1000)) < events) {
                    List<Object> batch = new ArrayList<>(1000);
                    for (long i = from; i < Math.min(events, from + 1000); i++) {
                      batch.add(GfKit.event(topic, i, "key-" + (i % 10_000)));
                    }
                    boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, batch));
                  }
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      loaders.shutdownNow();
    }
  }

  /**
   * The floor: every row of the backlog read with the columns a consumer reads, one thread per
   * partition, in pages of {@code page} rows by sequence, as a consumer pages.
   */
  private static double plainSelect(
      BenchDb db, TopicName topic, int partitions, int page, int events) throws Exception {
    long topicId;
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT t.id FROM "
                    + GfKit.SCHEMA
                    + ".topic t JOIN "
                    + GfKit.SCHEMA
                    + ".namespace n ON n.id = t.namespace_id WHERE n.path = ? AND t.name = ?")) {
      ps.setString(1, topic.namespace().toString());
      ps.setString(2, topic.name());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        topicId = rs.getLong(1);
      }
    }
    ExecutorService readers = Executors.newFixedThreadPool(partitions, named("c1-select"));
    AtomicLong rows = new AtomicLong();
    long start = System.nanoTime();
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        int partition = p;
        done.add(
            readers.submit(
                () -> {
                  try (Connection c = db.connect();
                      PreparedStatement ps =
                          c.prepareStatement(
                              "SELECT seq, event_id, event_key, event_type, source, content_type,"
                                  + " payload, headers::text, created_at, deliver_at FROM "
                                  + GfKit.SCHEMA
                                  + ".log WHERE topic_id = ? AND partition = ? AND seq > ?"
                                  + " ORDER BY seq LIMIT ?")) {
                    long after = 0;
                    while (true) {
                      ps.setLong(1, topicId);
                      ps.setInt(2, partition);
                      ps.setLong(3, after);
                      ps.setInt(4, page);
                      int n = 0;
                      try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                          after = rs.getLong(1);
                          rs.getObject(2);
                          rs.getString(3);
                          rs.getString(4);
                          rs.getString(5);
                          rs.getString(6);
                          rs.getBytes(7);
                          rs.getString(8);
                          rs.getTimestamp(9);
                          rs.getTimestamp(10);
                          n++;
                        }
                      }
                      rows.addAndGet(n);
                      if (n < page) {
                        return null;
                      }
                    }
                  }
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      readers.shutdownNow();
    }
    if (rows.get() != events) {
      throw new BenchFailure("C1: the plain SELECT read " + rows.get() + " rows of " + events);
    }
    return (System.nanoTime() - start) / 1e9;
  }

  /**
   * Events published at a steady rate to the live topic, each carrying its commit time; the live
   * subscription's handler records how long after the commit it ran.
   */
  private static final class LiveTraffic implements AutoCloseable {
    private final Boxline boxline;
    private final TopicName topic;
    private final int rate;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final java.util.concurrent.ConcurrentLinkedQueue<Long> latencies =
        new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final AtomicLong sent = new AtomicLong();
    private Thread producer;
    private Consumer consumer;

    LiveTraffic(Boxline boxline, TopicName topic, int rate) {
      this.boxline = boxline;
      this.topic = topic;
      this.rate = rate;
    }

    void start() {
      consumer =
          boxline
              .consumer("live")
              .handler(
                  e -> {
                    long sentAt = ByteBuffer.wrap(e.payload()).getLong();
                    latencies.add(System.nanoTime() - sentAt);
                  })
              .start();
      producer =
          new Thread(
              () -> {
                long period = 1_000_000_000L / rate;
                long due = System.nanoTime();
                while (running.get()) {
                  long n = sent.incrementAndGet();
                  // The payload carries the time just before the commit: the latency includes it.
                  boxline.inTransaction(
                      tx ->
                          boxline
                              .publisher()
                              .publish(
                                  tx,
                                  OutgoingEvent.builder(topic)
                                      .type("live")
                                      .key("live-" + (n % 64))
                                      .payload(
                                          ByteBuffer.allocate(8).putLong(System.nanoTime()).array())
                                      .build()));
                  due += period;
                  long wait = due - System.nanoTime();
                  if (wait > 0) {
                    java.util.concurrent.locks.LockSupport.parkNanos(wait); // the pace
                  }
                }
              },
              "c1-live-producer");
      producer.start();
    }

    /** The latencies recorded since the last call, sorted. */
    long[] measure() {
      List<Long> out = new ArrayList<>();
      Long l;
      while ((l = latencies.poll()) != null) {
        out.add(l);
      }
      return out.stream().mapToLong(Long::longValue).sorted().toArray();
    }

    @Override
    public void close() throws InterruptedException {
      running.set(false);
      if (producer != null) {
        producer.join(10_000);
      }
      if (consumer != null) {
        consumer.close();
      }
    }
  }

  private static String report(
      Options o,
      int events,
      int partitions,
      double selectSeconds,
      double catchUpSeconds,
      long[] before,
      long[] duringSelect,
      long[] during,
      LiveTraffic traffic) {
    double select = events / selectSeconds;
    double catchUp = events / catchUpSeconds;
    return "## C1 — catch-up\n\n"
        + String.format(
            Locale.ROOT,
            "A subscription created at the start of a backlog of %,d events (%d partitions, about"
                + " 200-byte payloads) drains with a no-op handler (batch %d, other settings"
                + " default) while %d events/s go on to another topic, whose subscription's commit →"
                + " handler latency is measured before and during. The floor is a plain SELECT of"
                + " the same rows and columns, a thread per partition, paged by sequence like a"
                + " consumer.%n%n",
            events,
            partitions,
            o.get(BATCH),
            o.get(LIVE_RATE))
        + "| | events/s | seconds |\n|---|---:|---:|\n"
        + String.format(
            Locale.ROOT, "| plain SELECT of the rows | %,.0f | %.1f |%n", select, selectSeconds)
        + String.format(
            Locale.ROOT, "| subscription catching up | %,.0f | %.1f |%n", catchUp, catchUpSeconds)
        + String.format(Locale.ROOT, "| catch-up / SELECT | %.2f× | |%n%n", catchUp / select)
        + "| live subscription's commit → handler | events | p50 ms | p99 ms |\n|---|---:|---:|---:|\n"
        + latencyRow("before the catch-up", before)
        + latencyRow("during the plain SELECT", duringSelect)
        + latencyRow("during the catch-up", during);
  }

  private static String latencyRow(String when, long[] sorted) {
    if (sorted.length == 0) {
      return "| " + when + " | 0 | – | – |\n";
    }
    return String.format(
        Locale.ROOT,
        "| %s | %,d | %.1f | %.1f |%n",
        when,
        sorted.length,
        Stats.percentile(sorted, 50) / 1e6,
        Stats.percentile(sorted, 99) / 1e6);
  }
}
