package io.boxline.bench;

import static io.boxline.bench.Bench.log;
import static io.boxline.bench.Soak.*;
import static io.boxline.bench.Stats.f;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.EventHandler;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.Publisher;
import io.boxline.RetentionPolicy;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.HdrHistogram.AbstractHistogram;
import org.HdrHistogram.ConcurrentHistogram;

/** One soak run's state and its phases: {@link Soak} declares the options and what it reports. */
final class SoakRunner {
  private final Options o;
  private final Db server;
  private final String schema;
  private final int perTxn;
  private final int events;
  private final int txns;
  private final int rate;
  private final TopicName topic = TopicName.of("bench", "soak");

  /** Commit → handler latencies in µs, cumulative; two significant digits (within 1 %). */
  private final ConcurrentHistogram histogram = new ConcurrentHistogram(2);

  private final AtomicLongArray committed;
  private final ConcurrentLinkedQueue<long[]> pending = new ConcurrentLinkedQueue<>();
  private final List<Tracker> trackers = new ArrayList<>();
  private final AtomicLong unknown = new AtomicLong();
  private final AtomicLong published = new AtomicLong();
  private final CommitClock clock = new CommitClock();
  private final List<Sample> samples = new ArrayList<>();
  private final String[] keys = new String[KEYS];
  private volatile String phase = LOAD;

  /** Counted down to stop the sampler (not an interrupt: that would close the CSV's channel). */
  private final java.util.concurrent.CountDownLatch stopSampling =
      new java.util.concurrent.CountDownLatch(1);

  private long t0;
  private Sample previous;
  private String sampleError;

  SoakRunner(Run run) {
    this.o = run.o();
    this.server = run.db();
    this.schema = run.schema();
    this.perTxn = Math.max(1, o.get(TXN));
    this.txns = Math.max(1, o.get(EVENTS) / perTxn);
    this.events = txns * perTxn;
    this.rate = o.get(RATE);
    this.committed = new AtomicLongArray(txns);
    for (int i = 0; i < SUBSCRIPTIONS.size(); i++) {
      trackers.add(new Tracker(events));
    }
    for (int k = 0; k < KEYS; k++) {
      keys[k] = "customer-" + k;
    }
  }

  Result run() throws Exception {
    String stamp =
        LocalDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
    Path csv = SoakPlots.targetDir().resolve("soak-postgresql-" + stamp + ".csv");
    int partitions = o.get(PARTITIONS);
    Duration retention = Duration.ofSeconds(o.get(RETENTION));
    Duration interval = Duration.ofSeconds(o.get(INTERVAL));
    long warnings0 = Bench.WARNINGS.get();
    log(
        "soak: %,d events (%d per transaction, %s), %d partitions, subscriptions %s (the"
            + " last a group of %d), retention %s every %s, a sample every %s s to %s",
        events,
        perTxn,
        f("%,d/s", rate),
        partitions,
        SUBSCRIPTIONS,
        GROUP_MEMBERS,
        retention,
        interval,
        f("%.1f", o.get(SAMPLE)),
        csv);
    try (Connection monitor = server.connect();
        HikariDataSource pool = server.pool("bench-soak", o.get(POOL), null)) {
      SoakSizes sizes = new SoakSizes(schema);
      String autovacuum = server.queryString("SHOW autovacuum");
      DataSource ds = clock.wrap(pool);
      Boxline boxline =
          Boxline.builder()
              .store(JdbcStore.builder(ds).schema(schema).build())
              .instanceId("soak-main")
              .retentionInterval(interval)
              .build()
              .start();
      List<Consumer> consumers = new ArrayList<>();
      Thread sampler = null;
      double loadStart;
      double loadEnd;
      double drainedAt;
      Sample startMark;
      Sample endMark;
      long outboxLeft;
      long retentionDeleted;
      try (BufferedWriter out = Files.newBufferedWriter(csv)) {
        boxline.admin().createNamespace(NamespacePath.of("bench"));
        boxline.admin().createTopic(topic, partitions);
        boxline.admin().setRetention(topic, RetentionPolicy.byAge(retention));
        for (String s : SUBSCRIPTIONS) {
          boxline.admin().createSubscription(SubscriptionSpec.of(s, topic));
        }
        Bench.awaitLeader(boxline);
        for (int s = 0; s < SUBSCRIPTIONS.size(); s++) {
          String name = SUBSCRIPTIONS.get(s);
          int members = s == SUBSCRIPTIONS.size() - 1 ? GROUP_MEMBERS : 1;
          for (int m = 1; m <= members; m++) {
            consumers.add(
                boxline
                    .consumer(name)
                    .id(members == 1 ? name : name + "-" + m)
                    .concurrency(o.get(CONCURRENCY))
                    .handler(handler(trackers.get(s)))
                    .start());
          }
        }
        out.write(SoakPlots.HEADER);
        out.newLine();
        t0 = System.nanoTime();
        previous = null;
        Thread samplerThread =
            new Thread(() -> sampleLoop(boxline, sizes, monitor, out), "soak-sampler");
        samplerThread.setDaemon(true);
        sampler = samplerThread;
        samplerThread.start();

        startMark = mark(boxline, sizes, monitor, out);
        loadStart = startMark.t();
        Workers producers = produce(boxline);
        producers.await();
        if (producers.failed()) {
          throw new BenchFailure("soak: a producer failed: " + producers.failure());
        }
        phase = DRAIN_PHASE;
        endMark = mark(boxline, sizes, monitor, out);
        loadEnd = endMark.t();
        log(
            "soak: all %,d events published in %.0f s (%,.0f/s); draining",
            events, loadEnd - loadStart, events / (loadEnd - loadStart));
        long deadline = System.nanoTime() + o.get(DRAIN) * 1_000_000_000L;
        while (minDistinct() < events) {
          if (System.nanoTime() > deadline) {
            throw new BenchFailure(
                f(
                    "soak: %d s after the load, the subscriptions have %s of %,d events",
                    o.get(DRAIN), distinctCounts(), events));
          }
          Thread.sleep(100); // waiting for the consumers, not synchronising a test
        }
        drainedAt = (System.nanoTime() - t0) / 1e9;
        log("soak: every subscription has every event, %.1f s after the load", drainedAt - loadEnd);
        stopSampling.countDown();
        samplerThread.join(60_000);
        synchronized (this) {
          samples.add(sample(boxline, sizes, monitor, out)); // the last one, after the drain
        }
        out.flush();
        outboxLeft = count(monitor, schema + ".outbox");
        retentionDeleted = boxline.stats().retentionDeleted();
      } finally {
        stopSampling.countDown();
        if (sampler != null) {
          sampler.join(60_000);
        }
        // In parallel: each close waits for its own in-flight batch.
        consumers.parallelStream().forEach(Consumer::close);
        boxline.close();
      }
      if (sampleError != null) {
        log("soak: a sample could not be read: %s", sampleError);
      }
      List<Delivered> delivered = new ArrayList<>();
      for (int s = 0; s < SUBSCRIPTIONS.size(); s++) {
        Tracker tr = trackers.get(s);
        delivered.add(
            new Delivered(
                SUBSCRIPTIONS.get(s), tr.deliveries(), tr.distinct(), tr.duplicates.get()));
        long missing = tr.firstMissing(events);
        if (missing >= 0) {
          throw new BenchFailure(
              "soak: subscription " + SUBSCRIPTIONS.get(s) + " never got event " + missing);
        }
      }
      if (unknown.get() != 0) {
        throw new BenchFailure("soak: " + unknown.get() + " deliveries of unknown events");
      }
      if (outboxLeft != 0) {
        throw new BenchFailure("soak: " + outboxLeft + " rows left in the outbox");
      }
      List<Path> charts = SoakPlots.write(csv);
      return new Result(
          o,
          events,
          rate,
          drainedAt,
          List.copyOf(samples),
          startMark,
          endMark,
          autovacuum,
          delivered,
          unknown.get(),
          outboxLeft,
          retentionDeleted,
          Bench.WARNINGS.get() - warnings0,
          csv,
          charts);
    }
  }

  /** The handler of one subscription: no work, it records the delivery and the latency. */
  private EventHandler handler(Tracker tracker) {
    return (Event e) -> {
      long now = System.nanoTime();
      long idx = Payloads.index(e.id());
      if (idx < 0 || idx >= events) {
        unknown.incrementAndGet();
        return;
      }
      tracker.mark(idx);
      int txn = (int) (idx / perTxn);
      long c = committed.get(txn);
      if (c != 0) {
        histogram.recordValue(Math.max(0, now - c) / 1000);
      } else {
        // The handler ran before the producer's thread stored the commit time: the sampler
        // records it once it is there.
        pending.add(new long[] {txn, now});
      }
    };
  }

  /** The producers: open-loop at --soak.rate. */
  private Workers produce(Boxline boxline) {
    AtomicLong next = new AtomicLong();
    Publisher publisher = boxline.publisher();
    long start = System.nanoTime();
    Workers workers = new Workers();
    return workers.start(
        o.get(PRODUCERS),
        t -> {
          for (long j; (j = next.getAndIncrement()) < txns && !workers.failed(); ) {
            long due = start + (long) (j * 1e9 * perTxn / rate);
            for (long wait; (wait = due - System.nanoTime()) > 0; ) {
              LockSupport.parkNanos(wait);
            }
            List<OutgoingEvent> batch = new ArrayList<>(perTxn);
            for (int k = 0; k < perTxn; k++) {
              long i = j * perTxn + k;
              batch.add(Payloads.event(topic, i, keys[(int) (i % KEYS)]));
            }
            boxline.inTransaction(tx -> publisher.publishAll(tx, batch));
            committed.set((int) j, Math.max(1, clock.lastCommitNanos()));
            published.addAndGet(perTxn);
          }
        });
  }

  private long minDistinct() {
    long min = Long.MAX_VALUE;
    for (Tracker t : trackers) {
      min = Math.min(min, t.distinct());
    }
    return min;
  }

  private String distinctCounts() {
    List<String> out = new ArrayList<>();
    for (int s = 0; s < trackers.size(); s++) {
      out.add(SUBSCRIPTIONS.get(s) + " " + trackers.get(s).distinct());
    }
    return String.join(", ", out);
  }

  /** A sample at a boundary of the load, written to the CSV like the others. */
  private synchronized Sample mark(
      Boxline boxline, SoakSizes sizes, Connection monitor, BufferedWriter out) throws IOException {
    Sample s = sample(boxline, sizes, monitor, out);
    samples.add(s);
    return s;
  }

  /** Latencies whose commit time was not stored yet when the handler ran. */
  private void drainPending() {
    List<long[]> retry = new ArrayList<>();
    for (long[] p; (p = pending.poll()) != null; ) {
      long c = committed.get((int) p[0]);
      if (c != 0) {
        histogram.recordValue(Math.max(0, p[1] - c) / 1000);
      } else {
        retry.add(p);
      }
    }
    pending.addAll(retry);
  }

  private void sampleLoop(
      Boxline boxline, SoakSizes sizes, Connection monitor, BufferedWriter out) {
    long every = (long) (o.get(SAMPLE) * 1e9);
    long due = t0;
    while (true) {
      due += every;
      try {
        if (stopSampling.await(Math.max(0, due - System.nanoTime()), TimeUnit.NANOSECONDS)) {
          return;
        }
      } catch (InterruptedException e) {
        return;
      }
      synchronized (this) {
        try {
          samples.add(sample(boxline, sizes, monitor, out));
        } catch (IOException | RuntimeException e) {
          sampleError = e.toString();
          return;
        }
      }
    }
  }

  /** Reads, writes and prints one sample (the caller holds the lock). */
  private Sample sample(Boxline boxline, SoakSizes sizes, Connection monitor, BufferedWriter out)
      throws IOException {
    drainPending();
    double t = (System.nanoTime() - t0) / 1e9;
    String ph = phase;
    long pub = published.get();
    long[] handled = new long[trackers.size()];
    for (int s = 0; s < handled.length; s++) {
      handled[s] = trackers.get(s).deliveries();
    }
    AbstractHistogram lat = histogram.copy();
    long cpu = Noise.jvmCpu();
    var stats = boxline.stats();
    SoakSizes.Reading r;
    try {
      r = sizes.read(monitor);
    } catch (SQLException e) {
      r = SoakSizes.Reading.NONE;
      if (sampleError == null) {
        sampleError = e.getMessage();
      }
    }
    double dt = previous == null ? t : t - previous.t();
    double inRate = (pub - (previous == null ? 0 : previous.published())) / dt;
    double[] outRate = new double[handled.length];
    for (int s = 0; s < handled.length; s++) {
      outRate[s] = (handled[s] - (previous == null ? 0 : previous.handled()[s])) / dt;
    }
    AbstractHistogram window = Soak.window(lat, previous == null ? null : previous.latency());
    double cpuMsPerS = previous == null ? 0 : (cpu - previous.cpuNanos()) / 1e6 / dt;
    Sample smp =
        new Sample(
            t,
            ph,
            pub,
            handled,
            lat,
            r,
            cpu,
            stats.retentionRuns(),
            stats.retentionDeleted(),
            inRate,
            outRate,
            Soak.percentileMillis(window, 50),
            Soak.percentileMillis(window, 99),
            window.getTotalCount(),
            previous == null ? Double.NaN : cpuMsPerS);
    previous = smp;
    out.write(SoakPlots.row(smp));
    out.newLine();
    out.flush();
    progress(smp);
    return smp;
  }

  private void progress(Sample s) {
    SoakSizes.Reading r = s.sizes();
    log(
        "soak t=%4.0f s %-5s in %,d (%,.0f/s), out %s, p50 %s ms, p99 %s ms; log %s MB (%d"
            + " table(s)), dead %,d, all tables %s MB; retention deleted %,d",
        s.t(),
        s.phase(),
        s.published(),
        s.inRate(),
        java.util.Arrays.toString(s.handled()),
        ms(s.p50()),
        ms(s.p99()),
        mb(r.logBytes()),
        r.logPartitions(),
        r.logDead(),
        mb(r.totalBytes()),
        s.retentionDeleted());
  }

  private static long count(Connection c, String table) throws SQLException {
    try (Statement st = c.createStatement();
        var rs = st.executeQuery("SELECT count(*) FROM " + table)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
