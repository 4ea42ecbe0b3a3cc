package io.boxline.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * P1: how the number of partitions of a topic changes throughput and idle cost. Per count (16 to
 * 65,536): a topic of that many partitions with one subscription and its consumer; producers
 * publish events with random keys (so every partition gets some) in transactions of {@code txn},
 * and the rate is taken from the first publish to the last event handled; then, once the consumer
 * has gone idle, every statement Boxline sends is counted for a window (as W3 counts them).
 */
final class P1Partitions {
  record Trial(
      int partitions,
      double createSeconds,
      double firstTouchPerSecond,
      double eventsPerSecond,
      double idleStatementsPerSecond,
      Map<String, Long> idleBreakdown) {}

  private static final Workload.Definition DEF = Workload.define("p1", Bench.Suite.W);

  static final Opt<int[]> COUNTS =
      DEF.ints("partitions", "16,256,4096,65536", "partition counts, one trial each");
  static final Opt<Integer> EVENTS = DEF.integer("events", 50_000, "events per trial");
  static final Opt<Integer> TXN = DEF.integer("txn", 10, "events per producer transaction");
  static final Opt<Integer> THREADS = DEF.integer("threads", 4, "producer threads");
  static final Opt<Integer> IDLE = DEF.integer("idle", 20, "counted idle seconds per trial");
  static final Opt<Integer> IDLE_RELEASE =
      DEF.integer(
          "idle-release",
          0,
          "the subscription's GroupPolicy idleRelease in s (0: the default, 10 s): how long an idle"
              + " partition stays leased");
  static final Opt<Integer> SETTLE =
      DEF.integer("settle", 15, "seconds after the last event before counting the idle cost");

  static final Workload WORKLOAD =
      DEF.runs(
          "partitions: throughput and idle cost of a topic of 16 to 65,536 partitions",
          run -> report(run.o(), new P1Partitions(run).run()));

  private final Options o;
  private final Db db;
  private final String runSchema;

  P1Partitions(Run run) {
    this.o = run.o();
    this.db = run.db();
    this.runSchema = run.schema();
  }

  List<Trial> run() throws Exception {
    List<Trial> out = new ArrayList<>();
    for (int partitions : o.get(COUNTS)) {
      Trial t = trial(partitions);
      out.add(t);
      Bench.log(
          "P1 %,d partitions: topic created in %.1f s, first event on each partition %,.0f"
              + " events/s, then %,.0f events/s end to end, idle %.2f statements/s",
          partitions,
          t.createSeconds(),
          t.firstTouchPerSecond(),
          t.eventsPerSecond(),
          t.idleStatementsPerSecond());
    }
    return out;
  }

  private Trial trial(int partitions) throws Exception {
    String schema = runSchema + "_p1_" + partitions;
    Probe probe = new Probe(schema);
    TopicName topic = TopicName.of("bench", "parts");
    int events = o.get(EVENTS);
    int txn = o.get(TXN);
    try (HikariDataSource pool = db.pool("bench-p1", o.get(Bench.POOL), probe.wrap(db.driver()));
        Boxline boxline =
            Boxline.builder()
                .store(JdbcStore.builder(pool).schema(schema).build())
                .build()
                .start()) {
      boxline.admin().createNamespace(NamespacePath.of("bench"));
      long c0 = System.nanoTime();
      boxline.admin().createTopic(topic, partitions);
      boxline.admin().createSubscription(SubscriptionSpec.of("p1", topic));
      if (o.get(IDLE_RELEASE) > 0) {
        boxline
            .admin()
            .setGroupPolicy(
                "p1",
                boxline
                    .admin()
                    .groupPolicy("p1")
                    .withIdleRelease(Duration.ofSeconds(o.get(IDLE_RELEASE))));
      }
      double createSeconds = (System.nanoTime() - c0) / 1e9;
      Bench.awaitLeader(boxline);
      AtomicLong handled = new AtomicLong();
      AtomicLong lastAt = new AtomicLong();
      try (Consumer consumer =
          boxline
              .consumer("p1")
              .handler(
                  e -> {
                    handled.incrementAndGet();
                    lastAt.set(System.nanoTime());
                  })
              .start()) {
        // First touch: one event on every partition, so that the consumer takes and prepares each
        // partition once (its lease, its parked events) before the measured, steady phase.
        String[] keys = keyPerPartition(partitions);
        long w0 = System.nanoTime();
        for (int from = 0; from < partitions; from += 100) {
          List<OutgoingEvent> batch = new ArrayList<>(100);
          for (int p = from; p < Math.min(partitions, from + 100); p++) {
            batch.add(Payloads.event(topic, 10_000_000L + p, keys[p]));
          }
          boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, batch));
        }
        awaitHandled(handled, partitions);
        double firstTouch = partitions / ((lastAt.get() - w0) / 1e9);
        handled.set(0);
        probe.reset();
        long t0 = System.nanoTime();
        int perThread = events / o.get(THREADS);
        new Workers()
            .start(
                o.get(THREADS),
                t -> {
                  for (int from = 0; from < perThread; from += txn) {
                    List<OutgoingEvent> batch = new ArrayList<>(txn);
                    for (int i = 0; i < txn && from + i < perThread; i++) {
                      long index = (long) t * perThread + from + i;
                      batch.add(Payloads.event(topic, index, UUID.randomUUID().toString()));
                    }
                    boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, batch));
                  }
                })
            .join();
        long total = (long) perThread * o.get(THREADS);
        awaitHandled(handled, total);
        double rate = total / ((lastAt.get() - t0) / 1e9);
        StringBuilder top = new StringBuilder();
        probe.snapshot().entrySet().stream()
            .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
            .limit(8)
            .forEach(
                e ->
                    top.append(
                        String.format(
                            "%n    %9.1f per 1,000 events  %s",
                            e.getValue() * 1000.0 / total, e.getKey())));
        Bench.log("P1 %,d partitions, statements while busy:%s", partitions, top);
        Thread.sleep(o.get(SETTLE) * 1000L);
        probe.reset();
        long i0 = System.nanoTime();
        Thread.sleep(o.get(IDLE) * 1000L);
        double seconds = (System.nanoTime() - i0) / 1e9;
        Map<String, Long> breakdown = probe.snapshot();
        long statements = breakdown.values().stream().mapToLong(Long::longValue).sum();
        return new Trial(
            partitions, createSeconds, firstTouch, rate, statements / seconds, breakdown);
      }
    }
  }

  private static void awaitHandled(AtomicLong handled, long total) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
    while (handled.get() < total) {
      if (System.nanoTime() > deadline) {
        throw new BenchFailure(
            "P1: " + handled.get() + " of " + total + " events handled in 10 minutes");
      }
      Thread.sleep(5);
    }
  }

  /** A key for each partition under the default (Kafka-compatible) partitioner. */
  static String[] keyPerPartition(int partitions) {
    io.boxline.Partitioner partitioner = io.boxline.Partitioner.kafkaCompatible();
    String[] keys = new String[partitions];
    int found = 0;
    for (long i = 0; found < partitions; i++) {
      String key = "p1-" + i;
      int p = partitioner.partition(key, partitions);
      if (keys[p] == null) {
        keys[p] = key;
        found++;
      }
    }
    return keys;
  }

  static String report(Options o, List<Trial> trials) {
    Table t =
        new Table(
            "partitions",
            "topic + subscription created in",
            "first event on each partition, ev/s",
            "then, events/s end to end",
            "vs 16",
            "idle statements/s",
            "busiest idle statement");
    Trial first = trials.get(0);
    for (Trial r : trials) {
      String busiest =
          r.idleBreakdown().entrySet().stream()
              .max(Map.Entry.comparingByValue())
              .map(e -> e.getKey() + " (" + e.getValue() + ")")
              .orElse("");
      t.row(
          String.format("%,d", r.partitions()),
          String.format("%.1f s", r.createSeconds()),
          String.format("%,.0f", r.firstTouchPerSecond()),
          String.format("%,.0f", r.eventsPerSecond()),
          String.format("%.2f×", r.eventsPerSecond() / first.eventsPerSecond()),
          String.format("%.2f", r.idleStatementsPerSecond()),
          busiest);
    }
    return "## P1 — partitions\n\n"
        + String.format(
            "First one event on every partition (transactions of 100), then %,d events with random"
                + " keys, %d producer threads, transactions of %d; one subscription and consumer"
                + " (defaults); idle counted for %d s after %d s.%n%n",
            o.get(EVENTS), o.get(THREADS), o.get(TXN), o.get(IDLE), o.get(SETTLE))
        + t;
  }
}
