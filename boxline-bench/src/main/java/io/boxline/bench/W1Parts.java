package io.boxline.bench;

import io.boxline.Boxline;
import io.boxline.BoxlineStats;
import io.boxline.Consumer;
import io.boxline.NamespacePath;
import io.boxline.Partitioner;
import io.boxline.Publisher;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * W1 taken apart (PostgreSQL on Linux, one event per transaction): where Boxline's extra CPU goes.
 * The same producer transactions run with more of Boxline switched on each time:
 *
 * <ul>
 *   <li>{@code raw}: business row and event row into plain tables (W1's baseline);
 *   <li>{@code outbox}: Boxline's publish into the outbox, no sequencer, no consumer (and no NOTIFY
 *       to wake a remote sequencer, as in W1, where the sequencer is local);
 *   <li>{@code sequencer}: plus the sequencer moving the rows into the log;
 *   <li>{@code full}: plus a consumer with a no-op handler (W1 itself).
 * </ul>
 *
 * <p>For each: events/s until the last commit (or, for {@code full}, the last event handled), CPU
 * per event of the whole machine and of this JVM (from /proc; the rest is the database server), and
 * per event: transactions, WAL bytes and records (pg_stat_database, pg_stat_wal), sequencer batches
 * and hand-over batches. Modes alternate, so a ratio is read side by side.
 */
final class W1Parts extends Trials {
  static final List<String> MODES = List.of("raw", "outbox", "sequencer", "full");

  /** One measured mode. */
  record Part(
      String mode,
      int round,
      double eventsPerSecond,
      double cpuMicrosPerEvent,
      double jvmMicrosPerEvent,
      double transactionsPerEvent,
      double walBytesPerEvent,
      double walRecordsPerEvent,
      double eventsPerSequencerBatch,
      double eventsPerConsumerBatch) {}

  static final Workload WORKLOAD =
      Workload.of(
          "w1-parts",
          Bench.Suite.W,
          "W1 taken apart: raw, outbox, sequencer, full (PostgreSQL on Linux)",
          List.of(
              W1Throughput.EVENTS,
              W1Throughput.WARMUP,
              W1Throughput.THREADS,
              W1Throughput.RUNS,
              W1Throughput.CONCURRENCY,
              W1Throughput.BATCH),
          run ->
              onPool(
                  run,
                  "bench-w1-parts",
                  pool -> Report.w1Parts(run.o(), new W1Parts(run, pool).run())));

  W1Parts(Run run, DataSource pool) {
    super(run, pool, "parts");
  }

  List<Part> run() throws Exception {
    if (!(db.kind instanceof PostgreSqlDatabase)) {
      throw new IllegalArgumentException("w1-parts runs on PostgreSQL only");
    }
    List<Part> parts = new ArrayList<>();
    int events = o.get(W1Throughput.EVENTS);
    for (String mode : MODES) { // warm-up, not reported
      measure(mode, Math.min(events, o.get(W1Throughput.WARMUP)), 0);
    }
    for (int round = 1; round <= o.get(W1Throughput.RUNS); round++) {
      for (String mode : MODES) {
        Part p = measure(mode, events, round);
        parts.add(p);
        Bench.log(
            "W1 parts round %d %-9s: %s events/s, CPU %.0f µs/event (this JVM %.0f)",
            round,
            mode,
            Stats.rate(p.eventsPerSecond()),
            p.cpuMicrosPerEvent(),
            p.jvmMicrosPerEvent());
      }
    }
    return parts;
  }

  private Part measure(String mode, int events, int round) throws Exception {
    String schema = nextSchema();
    TopicName topic = TopicName.of("bench", "events");
    Boxline boxline = null;
    Consumer consumer = null;
    CountDownLatch handled = new CountDownLatch(events);
    db.exec(db.kind.createSchema(schema));
    try {
      db.exec(db.kind.businessDdl(schema), db.kind.plainEventDdl(schema));
      if (!mode.equals("raw")) {
        boxline =
            Boxline.builder()
                .store(JdbcStore.builder(pool).schema(schema).build())
                .sequencer(!mode.equals("outbox"))
                // Without a local sequencer a publisher wakes the remote one with a NOTIFY (at most
                // every 2 ms); W1's producers have a local one and send none.
                .producerNotifyInterval(
                    mode.equals("outbox")
                        ? Duration.ofSeconds(10)
                        : Boxline.Builder.DEFAULT_PRODUCER_NOTIFY_INTERVAL)
                .build()
                .start();
        boxline.admin().createNamespace(NamespacePath.of("bench"));
        boxline.admin().createTopic(topic, partitions);
        boxline.admin().createSubscription(SubscriptionSpec.of(SUBSCRIPTION, topic));
        if (!mode.equals("outbox")) {
          Bench.awaitLeader(boxline);
        }
        if (mode.equals("full")) {
          consumer =
              consumer(boxline, e -> handled.countDown(), o.get(W1Throughput.CONCURRENCY))
                  .batchSize(o.get(W1Throughput.BATCH))
                  .start();
        }
      }
      Publisher publisher = boxline == null ? null : boxline.publisher();
      String business = db.kind.businessInsert(schema);
      String plain = db.kind.plainInsert(schema, 1);
      if (round > 0) {
        Bench.quiet(o);
      }
      BoxlineStats before = boxline == null ? null : boxline.stats();
      long[] wal0 = wal();
      long cpu0 = machineTicks();
      long jvm0 = jvmTicks();
      long t0 = System.nanoTime();
      new W1Throughput(run, pool)
          .produce(
              1,
              events,
              business,
              (c, index, keys) -> {
                String key = keys[0];
                if (publisher == null) {
                  int partition = Partitioner.kafkaCompatible().partition(key, partitions);
                  db.kind.insertPlainEvents(
                      c, plain, index, new String[] {key}, new int[] {partition});
                } else {
                  publisher.publish(c, Payloads.event(topic, index, key));
                }
              });
      if (consumer != null && !handled.await(120, TimeUnit.SECONDS)) {
        throw new BenchFailure("W1 parts: the consumer did not handle " + events + " events");
      }
      long nanos = System.nanoTime() - t0;
      long cpu = machineTicks() - cpu0;
      long jvm = jvmTicks() - jvm0;
      long[] wal = wal();
      BoxlineStats after = boxline == null ? null : boxline.stats();
      double batches = after == null ? 0 : after.sequencerBatches() - before.sequencerBatches();
      double handOvers = after == null ? 0 : after.handOverHits() - before.handOverHits();
      // /proc counts in clock ticks of 10 ms.
      return new Part(
          mode,
          round,
          events / (nanos / 1e9),
          cpu * 1e4 / events,
          jvm * 1e4 / events,
          (wal[0] - wal0[0]) / (double) events,
          (wal[1] - wal0[1]) / (double) events,
          (wal[2] - wal0[2]) / (double) events,
          batches == 0 ? 0 : events / batches,
          handOvers == 0 ? 0 : events / handOvers);
    } finally {
      if (consumer != null) {
        consumer.close();
      }
      if (boxline != null) {
        boxline.close();
      }
      db.dropSchema(schema);
    }
  }

  /** Committed transactions, WAL bytes and WAL records of the server so far. */
  private long[] wal() {
    return new long[] {
      db.queryLong("SELECT sum(xact_commit)::bigint FROM pg_stat_database"),
      db.queryLong("SELECT wal_bytes::bigint FROM pg_stat_wal"),
      db.queryLong("SELECT wal_records FROM pg_stat_wal")
    };
  }

  /** Busy clock ticks of the whole machine (user, nice, system, irq, softirq) from /proc/stat. */
  private static long machineTicks() throws IOException {
    String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
    return Long.parseLong(f[1])
        + Long.parseLong(f[2])
        + Long.parseLong(f[3])
        + Long.parseLong(f[6])
        + Long.parseLong(f[7]);
  }

  /** User and system clock ticks of this JVM from /proc/self/stat. */
  private static long jvmTicks() throws IOException {
    String s = Files.readString(Path.of("/proc/self/stat"));
    String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }
}
