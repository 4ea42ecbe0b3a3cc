package io.boxline.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.StartPosition;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.bench.DeliveryCheck.BenchFailure;
import io.boxline.jdbc.JdbcStore;
import io.boxline.relay.Relay;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * Relays (issue 5): what a {@link Relay} adds on the way to a broker. Usage (from the repository
 * root, after installing the modules):
 *
 * <pre>
 * ./mvnw -q -pl boxline-bench compile exec:exec -Dexec.executable=java \
 *     -Dexec.args="-cp %classpath io.boxline.bench.RelayBench all"
 * </pre>
 *
 * <p>First argument: {@code all} or a comma-separated list of {@code memory}, {@code webhook},
 * {@code kafka}, {@code rabbitmq}, {@code nats}. For each sink, on a Boxline of its own (a schema
 * {@code relaybench_<random>_...} in the {@code postgres} database, dropped afterwards):
 *
 * <ul>
 *   <li><b>throughput</b>: with the relay running, {@code --events} events (200-byte JSON, {@code
 *       --keys} keys, {@code --txn} per transaction, {@code --threads} producer threads) are
 *       published; events/s from the first publish until the sink confirmed the last of them (after
 *       a warm-up of {@code --warmup} events that is not counted);
 *   <li><b>added latency</b>: one event per transaction, paced open-loop at {@code --rate}/s for
 *       {@code --warmup-s} + {@code --seconds}; per event, commit returned → the sink's send
 *       returned with it confirmed by the broker, and — in the same run, from a second subscription
 *       on the same topic — commit returned → a plain in-process handler entered.
 * </ul>
 *
 * <p>Other options: {@code --host=127.0.0.1:5432 --user=postgres --password= --partitions=8
 * --batch=100 --concurrency=4 --pool=16}. Results are printed as Markdown and written to {@code
 * boxline-bench/target/relay-<time>.md}. An event that is never confirmed, or a broker that holds
 * fewer messages than were confirmed, fails the run.
 */
public final class RelayBench {
  static final List<String> ALL = List.of("memory", "webhook", "kafka", "rabbitmq", "nats");
  private static final TopicName TOPIC = TopicName.of("bench", "events");
  private static final long WAIT_NANOS = 300_000_000_000L;

  record Throughput(
      String sink,
      int events,
      double seconds,
      double producerSeconds,
      long sends,
      long failedSends,
      long duplicates,
      long stored,
      long expected,
      String noise) {}

  record Latency(
      String sink,
      int rate,
      int events,
      double achieved,
      long[] relay,
      long[] plain,
      long[] commit,
      long[] late,
      long duplicates,
      long stored,
      long expected,
      String noise) {}

  private final GfKit.Options o;
  private final Db db;
  private final HikariDataSource pool;
  private final String runSchema;
  private final int partitions;
  private final int batch;
  private final int concurrency;
  private final int keys;
  private int schemas;

  private RelayBench(GfKit.Options o, Db db, HikariDataSource pool, String runSchema) {
    this.o = o;
    this.db = db;
    this.pool = pool;
    this.runSchema = runSchema;
    this.partitions = o.getInt("partitions", 8);
    this.batch = o.getInt("batch", 100);
    this.concurrency = o.getInt("concurrency", 4);
    this.keys = o.getInt("keys", 100);
  }

  public static void main(String[] args) throws Exception {
    Bench.quietLogs();
    if (args.length == 0) {
      args = new String[] {"all"};
    }
    List<String> sinks = new ArrayList<>();
    for (String s : args[0].toLowerCase(Locale.ROOT).split(",")) {
      if (s.equals("all")) {
        sinks.addAll(ALL);
      } else if (ALL.contains(s)) {
        sinks.add(s);
      } else {
        throw new IllegalArgumentException(
            "unknown sink " + s + "; use " + String.join(", ", ALL) + " or all");
      }
    }
    GfKit.Options o = GfKit.Options.parse(args, 1);
    Db db = new Db("jdbc:postgresql://" + o.host() + "/postgres", o.user(), o.password());
    String runSchema =
        "relaybench_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    Thread cleanup =
        new Thread(
            () -> {
              Db.closePools();
              dropQuietly(db, runSchema);
            },
            "relay-bench-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanup);
    StringBuilder report = new StringBuilder(GfKit.header("Relay benchmark run", args));
    List<Throughput> throughput = new ArrayList<>();
    List<Latency> latency = new ArrayList<>();
    List<String> described = new ArrayList<>();
    long started = System.nanoTime();
    try (HikariDataSource pool = db.pool("relay-bench", o.getInt("pool", 16), null)) {
      RelayBench bench = new RelayBench(o, db, pool, runSchema);
      for (String sink : sinks) {
        try (RelayTargets.Target target = RelayTargets.create(sink)) {
          described.add("- **" + sink + "**: " + target.describe());
          Throughput t = bench.throughput(target);
          throughput.add(t);
          GfKit.log(
              "%s throughput: %,d events in %.2f s = %s events/s (%s)",
              sink, t.events(), t.seconds(), Stats.rate(t.events() / t.seconds()), t.noise());
          Latency l = bench.latency(target);
          latency.add(l);
          GfKit.log(
              "%s latency %d/s: relay p50 %s p99 %s max %s ms; plain consumer p50 %s p99 %s ms"
                  + " (%s)",
              sink,
              l.rate(),
              Stats.ms(Stats.percentile(l.relay(), 50)),
              Stats.ms(Stats.percentile(l.relay(), 99)),
              Stats.ms(Stats.percentile(l.relay(), 100)),
              Stats.ms(Stats.percentile(l.plain(), 50)),
              Stats.ms(Stats.percentile(l.plain(), 99)),
              l.noise());
        }
      }
      report.append(bench.report(described, throughput, latency));
    } finally {
      dropQuietly(db, runSchema);
      try {
        Runtime.getRuntime().removeShutdownHook(cleanup);
      } catch (IllegalStateException ignored) {
        // shutting down already
      }
    }
    report.append(
        Stats.f(
            "%nTotal time: %.0f s. Every event was confirmed by its sink and every broker held at"
                + " least as many messages as were confirmed.%n",
            (System.nanoTime() - started) / 1e9));
    System.out.println();
    System.out.println(report);
    Path file = write(report.toString());
    System.out.println("Written to " + file.toAbsolutePath());
  }

  // ------------------------------------------------------------------ throughput
  private Throughput throughput(RelayTargets.Target target) throws Exception {
    int warm = o.getInt("warmup", 1_000);
    int n = o.getInt("events", 20_000);
    int txn = o.getInt("txn", 10);
    int threads = o.getInt("threads", 4);
    int total = warm + n;
    String trial = RelayTargets.trialName(target.name(), "tp");
    String schema = runSchema + "_" + (++schemas);
    Boxline boxline = boxline(schema);
    try {
      boxline
          .admin()
          .createSubscription(
              SubscriptionSpec.of("relay", TOPIC).startAt(StartPosition.earliest()));
      TimedSink sink = new TimedSink(target.open(trial, boxline, partitions), total);
      long stored;
      double seconds;
      double producerSeconds;
      String noise;
      try (Relay relay = relay(boxline, sink)) {
        publish(boxline, 0, warm, txn, threads);
        await(() -> sink.distinct() >= warm, target.name() + " warm-up confirmed");
        Noise machine = Noise.start();
        long t0 = System.nanoTime();
        publish(boxline, warm, n, txn, threads);
        producerSeconds = (System.nanoTime() - t0) / 1e9;
        await(() -> sink.distinct() >= total, target.name() + ": all " + n + " confirmed");
        noise = machine.since();
        await(() -> relay.sentCount() >= total, "relay.sentCount() reaching " + total);
        long last = 0;
        for (int i = warm; i < total; i++) {
          last = Math.max(last, sink.confirmedAt(i));
        }
        seconds = (last - t0) / 1e9;
      }
      stored = target.stored(trial);
      check(target.name() + " throughput", sink, stored, total);
      target.remove(trial);
      return new Throughput(
          target.name(),
          n,
          seconds,
          producerSeconds,
          sink.sends(),
          sink.failedSends(),
          sink.duplicates(),
          stored,
          total,
          noise);
    } finally {
      close(boxline, schema);
    }
  }

  /** Publishes events first … first+count-1, {@code txn} per transaction, from {@code threads}. */
  private void publish(Boxline boxline, int first, int count, int txn, int threads)
      throws InterruptedException {
    AtomicInteger next = new AtomicInteger(first);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> list = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread w =
          new Thread(
              () -> {
                try {
                  for (int start;
                      (start = next.getAndAdd(txn)) < first + count && failure.get() == null; ) {
                    List<OutgoingEvent> events = new ArrayList<>(txn);
                    for (int i = start; i < Math.min(start + txn, first + count); i++) {
                      events.add(event(i));
                    }
                    boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, events));
                  }
                } catch (Throwable e) {
                  failure.compareAndSet(null, e);
                }
              },
              "producer-" + t);
      list.add(w);
      w.start();
    }
    for (Thread w : list) {
      w.join();
    }
    if (failure.get() != null) {
      throw new IllegalStateException("producer failed: " + failure.get(), failure.get());
    }
  }

  // ------------------------------------------------------------------ latency
  private Latency latency(RelayTargets.Target target) throws Exception {
    int rate = o.getInt("rate", 200);
    int warm = (int) (rate * o.getDouble("warmup-s", 2));
    int measured = (int) (rate * o.getDouble("seconds", 10));
    int total = warm + measured;
    String trial = RelayTargets.trialName(target.name(), "lat");
    String schema = runSchema + "_" + (++schemas);
    Boxline boxline = boxline(schema);
    try {
      boxline
          .admin()
          .createSubscription(
              SubscriptionSpec.of("relay", TOPIC).startAt(StartPosition.earliest()));
      boxline
          .admin()
          .createSubscription(
              SubscriptionSpec.of("plain", TOPIC).startAt(StartPosition.earliest()));
      TimedSink sink = new TimedSink(target.open(trial, boxline, partitions), total);
      AtomicLongArray handled = new AtomicLongArray(total);
      AtomicInteger handledCount = new AtomicInteger();
      long[] committed = new long[total];
      long[] took = new long[total];
      long[] late = new long[total];
      String noise;
      long firstDue;
      long lastDone;
      Consumer plain =
          boxline
              .consumer("plain")
              .handler(
                  e -> {
                    long now = System.nanoTime();
                    long i = Payloads.index(e.id());
                    if (i >= 0 && i < total && handled.compareAndSet((int) i, 0, now)) {
                      handledCount.incrementAndGet();
                    }
                  })
              .batchSize(batch)
              .concurrency(concurrency)
              .start();
      try (Relay relay = relay(boxline, sink)) {
        Noise machine = Noise.start();
        var publisher = boxline.publisher();
        firstDue =
            Pacer.run(
                total,
                rate,
                8,
                (i, lateNanos) -> {
                  OutgoingEvent e = event(i);
                  long t0 = System.nanoTime();
                  boxline.inTransaction(tx -> publisher.publish(tx, e));
                  long t1 = System.nanoTime();
                  committed[i] = t1;
                  took[i] = t1 - t0;
                  late[i] = lateNanos;
                });
        lastDone = System.nanoTime();
        await(() -> sink.distinct() >= total, target.name() + ": all " + total + " confirmed");
        await(() -> handledCount.get() >= total, "plain consumer: all " + total + " handled");
        noise = machine.since();
        await(() -> relay.sentCount() >= total, "relay.sentCount() reaching " + total);
      } finally {
        plain.close();
      }
      long stored = target.stored(trial);
      check(target.name() + " latency", sink, stored, total);
      target.remove(trial);
      long[] relayLat = new long[measured];
      long[] plainLat = new long[measured];
      long[] commit = new long[measured];
      long[] lateness = new long[measured];
      for (int i = warm; i < total; i++) {
        relayLat[i - warm] = sink.confirmedAt(i) - committed[i];
        plainLat[i - warm] = handled.get(i) - committed[i];
        commit[i - warm] = took[i];
        lateness[i - warm] = late[i];
      }
      Arrays.sort(relayLat);
      Arrays.sort(plainLat);
      Arrays.sort(commit);
      Arrays.sort(lateness);
      long firstMeasured = firstDue + (long) (warm * 1e9 / rate);
      double achieved = measured / ((lastDone - firstMeasured) / 1e9);
      return new Latency(
          target.name(),
          rate,
          measured,
          achieved,
          relayLat,
          plainLat,
          commit,
          lateness,
          sink.duplicates(),
          stored,
          total,
          noise);
    } finally {
      close(boxline, schema);
    }
  }

  // ------------------------------------------------------------------ plumbing
  private Boxline boxline(String schema) throws InterruptedException {
    Boxline boxline =
        Boxline.builder().store(JdbcStore.builder(pool).schema(schema).build()).build().start();
    boxline.admin().createNamespace(NamespacePath.of("bench"));
    boxline.admin().createTopic(TOPIC, partitions);
    Bench.awaitLeader(boxline);
    return boxline;
  }

  private Relay relay(Boxline boxline, TimedSink sink) {
    return Relay.builder(boxline)
        .subscription("relay")
        .sink(sink)
        .batchSize(batch)
        .concurrency(concurrency)
        .start();
  }

  private void close(Boxline boxline, String schema) {
    boxline.close();
    db.exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
  }

  private OutgoingEvent event(int i) {
    return OutgoingEvent.builder(TOPIC)
        .id(Payloads.id(i))
        .type("order.placed")
        .key("customer-" + (i % keys))
        .contentType("application/json")
        .payload(Payloads.payload(i))
        .build();
  }

  private static void await(BooleanSupplier done, String what) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT_NANOS;
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new BenchFailure("not done within " + WAIT_NANOS / 1_000_000_000L + " s: " + what);
      }
      Thread.sleep(2);
    }
  }

  private static void check(String what, TimedSink sink, long stored, int total) {
    if (sink.distinct() != total || sink.foreign() != 0) {
      throw new BenchFailure(
          what
              + ": "
              + sink.distinct()
              + " of "
              + total
              + " confirmed, "
              + sink.foreign()
              + " foreign");
    }
    if (stored >= 0 && stored < total) {
      throw new BenchFailure(
          what + ": the broker holds " + stored + " messages, " + total + " were confirmed");
    }
  }

  private static void dropQuietly(Db db, String runSchema) {
    try {
      db.dropSchemas(runSchema);
    } catch (RuntimeException e) {
      System.err.println("could not drop schemas " + runSchema + "*: " + e.getMessage());
    }
  }

  // ------------------------------------------------------------------ report
  private String report(
      List<String> described, List<Throughput> throughput, List<Latency> latency) {
    StringBuilder sb = new StringBuilder();
    sb.append("## Sinks\n\n").append(String.join("\n", described)).append("\n\n");
    sb.append(
        Stats.f(
            "Every trial: a Boxline of its own (schema in the `postgres` database, HikariCP pool"
                + " of %d shared by producers, relay and consumer), topic of %d partitions, relay"
                + " with batch size %d and concurrency %d (the relay's defaults unless set).%n%n",
            o.getInt("pool", 16), partitions, batch, concurrency));
    sb.append(
        Stats.f(
            "## Throughput%n%n%,d events (200-byte JSON, %d keys, %d per transaction, %d producer"
                + " threads) published with the relay running, after %,d warm-up events; time"
                + " from the first publish until the sink's send returned with the last of them"
                + " confirmed by the broker.%n%n",
            o.getInt("events", 20_000),
            keys,
            o.getInt("txn", 10),
            o.getInt("threads", 4),
            o.getInt("warmup", 1_000)));
    Table t =
        new Table(
            "Sink",
            "Events",
            "Seconds",
            "Events/s (publish → confirmed)",
            "Producers done (s)",
            "Sends (failed)",
            "Duplicates",
            "Broker holds",
            "Machine during the run");
    for (Throughput r : throughput) {
      t.row(
          r.sink(),
          Stats.f("%,d", r.events()),
          Stats.f("%.2f", r.seconds()),
          Stats.rate(r.events() / r.seconds()),
          Stats.f("%.2f", r.producerSeconds()),
          Stats.f("%,d (%d)", r.sends(), r.failedSends()),
          r.duplicates(),
          Stats.f("%,d of %,d", r.stored(), r.expected()),
          r.noise());
    }
    sb.append(t).append('\n');
    sb.append(
        Stats.f(
            "## Added latency%n%nOne event per transaction (`inTransaction`), paced open-loop at"
                + " %d/s by 8 sender threads, %.0f s warm-up then %.0f s measured. Relay: commit"
                + " returned → the sink's send returned with the event confirmed (broker"
                + " acknowledgement). Plain consumer: a second subscription on the same topic,"
                + " same batch size and concurrency, no-op handler; commit returned → handler"
                + " entered. Both in the same run. Milliseconds.%n%n",
            o.getInt("rate", 200), o.getDouble("warmup-s", 2), o.getDouble("seconds", 10)));
    Table l =
        new Table(
            "Sink",
            "Events",
            "Achieved/s",
            "Relay p50",
            "p90",
            "p99",
            "max",
            "Plain consumer p50",
            "p90",
            "p99",
            "max",
            "Relay − plain, p50",
            "Commit p50 / p99",
            "Send lag p99",
            "Machine during the run");
    for (Latency r : latency) {
      l.row(
          r.sink(),
          Stats.f("%,d", r.events()),
          Stats.f("%.0f", r.achieved()),
          Stats.ms(Stats.percentile(r.relay(), 50)),
          Stats.ms(Stats.percentile(r.relay(), 90)),
          Stats.ms(Stats.percentile(r.relay(), 99)),
          Stats.ms(Stats.percentile(r.relay(), 100)),
          Stats.ms(Stats.percentile(r.plain(), 50)),
          Stats.ms(Stats.percentile(r.plain(), 90)),
          Stats.ms(Stats.percentile(r.plain(), 99)),
          Stats.ms(Stats.percentile(r.plain(), 100)),
          Stats.ms(Stats.percentile(r.relay(), 50) - Stats.percentile(r.plain(), 50)),
          Stats.ms(Stats.percentile(r.commit(), 50))
              + " / "
              + Stats.ms(Stats.percentile(r.commit(), 99)),
          Stats.ms(Stats.percentile(r.late(), 99)),
          r.noise());
    }
    sb.append(l).append('\n');
    System.out.print(sb);
    return sb.toString();
  }

  private static Path write(String report) throws java.io.IOException {
    Path dir = Path.of("target");
    if (Files.isDirectory(Path.of("boxline-bench", "target"))) {
      dir = Path.of("boxline-bench", "target");
    }
    Files.createDirectories(dir);
    String stamp =
        LocalDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
    Path file = dir.resolve("relay-" + stamp + ".md");
    Files.writeString(file, report);
    return file;
  }
}
