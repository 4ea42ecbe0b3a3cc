package io.boxline.bench;

import io.boxline.Boxline;
import io.boxline.BoxlineStats;
import io.boxline.Consumer;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.Partitioner;
import io.boxline.Publisher;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.bench.DeliveryCheck.BenchFailure;
import io.boxline.jdbc.JdbcStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.PreparedStatement;
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
final class W1Parts {
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

  private final Bench.Options o;
  private final Db db;
  private final DataSource pool;
  private final String runSchema;
  private int trialCounter;

  W1Parts(Bench.Options o, Db db, DataSource pool, String runSchema) {
    this.o = o;
    this.db = db;
    this.pool = pool;
    this.runSchema = runSchema;
  }

  List<Part> run() throws Exception {
    if (!(db.kind instanceof PostgreSqlDatabase)) {
      throw new IllegalArgumentException("w1-parts runs on PostgreSQL only");
    }
    List<Part> parts = new ArrayList<>();
    for (String mode : MODES) { // warm-up, not reported
      measure(mode, Math.min(o.w1Events, o.w1WarmupEvents), 0);
    }
    for (int round = 1; round <= o.w1Runs; round++) {
      for (String mode : MODES) {
        Part p = measure(mode, o.w1Events, round);
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
    String schema = runSchema + "_parts_" + (++trialCounter);
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
        boxline.admin().createTopic(topic, o.partitions);
        boxline.admin().createSubscription(SubscriptionSpec.of("bench-sub", topic));
        if (!mode.equals("outbox")) {
          Bench.awaitLeader(boxline);
        }
        if (mode.equals("full")) {
          consumer =
              boxline
                  .consumer("bench-sub")
                  .handler(e -> handled.countDown())
                  .concurrency(o.w1ConsumerConcurrency)
                  .batchSize(o.w1ConsumerBatch)
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
      new W1Throughput(o, db, pool, runSchema)
          .produce(
              1,
              events,
              (c, index, keys) -> {
                String key = keys[0];
                try (PreparedStatement ps = c.prepareStatement(business)) {
                  ps.setString(1, "customer-" + (index % 977));
                  ps.setLong(2, 1000 + index % 90000);
                  ps.executeUpdate();
                }
                if (publisher == null) {
                  int partition = Partitioner.kafkaCompatible().partition(key, o.partitions);
                  db.kind.insertPlainEvents(
                      c, plain, index, new String[] {key}, new int[] {partition});
                } else {
                  publisher.publish(
                      c,
                      OutgoingEvent.builder(topic)
                          .id(Payloads.id(index))
                          .type("order.placed")
                          .key(key)
                          .contentType("application/json")
                          .payload(Payloads.payload(index))
                          .build());
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
