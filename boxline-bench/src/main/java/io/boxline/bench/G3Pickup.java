package io.boxline.bench;

import static io.boxline.bench.Bench.log;
import static io.boxline.bench.BenchFailure.check;
import static io.boxline.bench.Stats.f;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.OutgoingEvent;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicPartition;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

/**
 * G3, cold-partition pickup (issue 3): 3 idle consumers on 64 partitions; single events to unleased
 * partitions; latency from commit to handler. Runs in a database of its own ({@link BenchDb}).
 */
final class G3Pickup {
  private G3Pickup() {}

  private static final Workload.Definition DEF = Workload.define("g3", Bench.Suite.GROUPS);

  static final Opt<Integer> PARTITIONS = DEF.partitions(64);
  static final Opt<Integer> CONSUMERS = DEF.integer("consumers", 3, "idle consumers");
  static final Opt<Integer> SAMPLES = DEF.integer("samples", 200, "cold samples");
  static final Opt<Integer> WARM_EVERY =
      DEF.integer("warm-every", 4, "every n-th sample also a warm one (0: none)");
  static final Opt<Integer> GAP_MS = DEF.integer("gap-ms", 300, "ms between samples");
  static final Opt<Integer> COLD_AFTER_MS =
      DEF.integer(
          "cold-after-ms",
          14_000,
          "a partition is cold when nothing was published to it for this long, ms");
  static final Opt<Integer> POOL = DEF.pool(12);
  static final Opt<Integer> WARMUP = DEF.integer("warmup", 5, "s before the first sample");

  static final Workload WORKLOAD = DEF.runs("cold-partition pickup latency", G3Pickup::run);

  static String run(Run run) throws Exception {
    Options o = run.o();
    int partitions = o.get(PARTITIONS);
    int members = o.get(CONSUMERS);
    int coldSamples = o.get(SAMPLES);
    int warmEvery = o.get(WARM_EVERY); // every 4th sample also a warm one
    long gapMillis = o.get(GAP_MS);
    long coldAfterMillis = o.get(COLD_AFTER_MS);
    int warmSamples = warmEvery > 0 ? coldSamples / warmEvery : 0;
    int total = coldSamples + warmSamples;
    long[] committedAt = new long[total];
    long[] beforeCommit = new long[total];
    AtomicLongArray entered = new AtomicLongArray(total);
    AtomicIntegerArray seen = new AtomicIntegerArray(total);
    boolean[] cold = new boolean[total];
    AtomicReference<String> error = new AtomicReference<>();
    String[] keyOf = GroupFixture.keysPerPartition(partitions);
    long[] lastPublished = new long[partitions];
    Arrays.fill(lastPublished, Long.MIN_VALUE / 2);
    SplittableRandom random = new SplittableRandom(42);
    String load;
    long lost = 0;
    long xacts;
    double seconds;
    try (BenchDb db = BenchDb.create(run, "g3");
        Connection maintenance = db.maintenance()) {
      HikariDataSource pool = db.pool("g3", o.get(POOL), null);
      Boxline boxline = GfKit.start(GfKit.builder(pool, "g3-main"), GroupFixture.TOPIC, partitions);
      try {
        boxline.admin().createSubscription(SubscriptionSpec.of("g3", GroupFixture.TOPIC));
        List<Consumer> consumers = new ArrayList<>();
        for (int i = 0; i < members; i++) {
          consumers.add(
              boxline
                  .consumer("g3")
                  .id("g3-m" + i)
                  .handler(
                      (Event e) -> {
                        long now = System.nanoTime();
                        long idx = GfKit.index(e.id());
                        if (idx < 0 || idx >= total) {
                          error.compareAndSet(null, "unknown event " + e);
                          return;
                        }
                        entered.compareAndSet((int) idx, 0, now);
                        if (seen.incrementAndGet((int) idx) > 1) {
                          error.compareAndSet(null, "event " + idx + " delivered twice");
                        }
                      })
                  .start());
        }
        Thread.sleep(o.get(WARMUP) * 1000L); // every member has checked in
        log(
            "G3 %d idle consumers on %d partitions: %d cold + %d warm samples, one every %d ms",
            members, partitions, coldSamples, warmSamples, gapMillis);
        long x0 = db.transactions(maintenance);
        long start = System.nanoTime();
        int coldDone = 0;
        for (int i = 0; i < total; i++) {
          long due = start + i * gapMillis * 1_000_000L;
          Thread.sleep(Math.max(0, (due - System.nanoTime()) / 1_000_000));
          Set<Integer> held = new HashSet<>();
          for (Consumer c : consumers) {
            for (TopicPartition tp : c.assignedPartitions()) {
              held.add(tp.partition());
            }
          }
          boolean wantWarm = warmEvery > 0 && i % (warmEvery + 1) == warmEvery;
          if (coldDone >= coldSamples) {
            wantWarm = true;
          }
          List<Integer> candidates = new ArrayList<>();
          long now = System.nanoTime();
          for (int p = 0; p < partitions; p++) {
            boolean isCold =
                !held.contains(p) && now - lastPublished[p] > coldAfterMillis * 1_000_000L;
            if (wantWarm ? held.contains(p) : isCold) {
              candidates.add(p);
            }
          }
          if (candidates.isEmpty()) {
            // Nothing warm (or cold) right now: take the other kind rather than wait.
            wantWarm = !wantWarm;
            for (int p = 0; p < partitions; p++) {
              boolean isCold =
                  !held.contains(p) && now - lastPublished[p] > coldAfterMillis * 1_000_000L;
              if (wantWarm ? held.contains(p) : isCold) {
                candidates.add(p);
              }
            }
            check(!candidates.isEmpty(), "G3: no cold and no warm partition to publish to");
          }
          int p = candidates.get(random.nextInt(candidates.size()));
          cold[i] = !wantWarm;
          if (cold[i]) {
            coldDone++;
          }
          lastPublished[p] = System.nanoTime();
          OutgoingEvent e = GfKit.event(GroupFixture.TOPIC, i, keyOf[p]);
          int idx = i;
          boxline.inTransaction(
              tx -> {
                var r = boxline.publisher().publish(tx, e);
                beforeCommit[idx] = System.nanoTime();
                return r;
              });
          committedAt[i] = System.nanoTime();
        }
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (true) {
          int missing = 0;
          for (int i = 0; i < total; i++) {
            missing += seen.get(i) == 0 ? 1 : 0;
          }
          if (missing == 0) {
            break;
          }
          check(System.nanoTime() < deadline, "G3: " + missing + " events never handled");
          Thread.sleep(50);
        }
        seconds = (System.nanoTime() - start) / 1e9;
        xacts = db.transactions(maintenance) - x0;
        load = Noise.loadAverages();
        Thread.sleep(500);
        check(error.get() == null, "G3: " + error.get());
        long handled = 0;
        for (Consumer c : consumers) {
          handled += c.handledCount();
          lost += c.lostCount();
        }
        check(handled == total, "G3: handledCount " + handled + ", expected " + total);
        GroupFixture.closeAll(consumers);
      } finally {
        boxline.close();
      }
    }
    List<Long> coldLat = new ArrayList<>();
    List<Long> warmLat = new ArrayList<>();
    List<Long> coldLatFromCommitStart = new ArrayList<>();
    for (int i = 0; i < total; i++) {
      long l = entered.get(i) - committedAt[i];
      (cold[i] ? coldLat : warmLat).add(l);
      if (cold[i]) {
        coldLatFromCommitStart.add(entered.get(i) - beforeCommit[i]);
      }
    }
    long[] c = coldLat.stream().mapToLong(Long::longValue).sorted().toArray();
    long[] w = warmLat.stream().mapToLong(Long::longValue).sorted().toArray();
    long[] cb = coldLatFromCommitStart.stream().mapToLong(Long::longValue).sorted().toArray();
    int over = 0;
    for (long v : c) {
      over += v > 100_000_000L ? 1 : 0;
    }
    StringBuilder sb = new StringBuilder("## G3 — cold-partition pickup latency\n\n");
    sb.append(
        f(
            "%d consumers (one Boxline instance, default policy) idle on a topic of %d partitions;"
                + " the producer (same JVM, boxline.inTransaction, one event per transaction)"
                + " publishes one event every %d ms, alternately to a random *cold* partition (no"
                + " consumer holds it and nothing was published to it for %d s, so any lease from"
                + " an earlier sample was released by idleRelease) and, every %d-th sample, to a"
                + " *warm* one (currently leased). Latency: System.nanoTime() when inTransaction"
                + " returned → when the handler was entered. Run took %.0f s, %d server"
                + " transactions (%.1f/s); load %s.%n%n",
            members,
            partitions,
            gapMillis,
            coldAfterMillis / 1000,
            warmEvery + 1,
            seconds,
            xacts,
            xacts / seconds,
            load));
    Table t =
        new Table("partitions", "samples", "p50 ms", "p90 ms", "p99 ms", "max ms", "> 100 ms");
    latencyRow(t, "cold", c, over);
    latencyRow(t, "cold, from just before COMMIT", cb, "");
    latencyRow(t, "warm (leased)", w, "");
    sb.append(t).append('\n');
    sb.append(
        f(
            "Goal (cold pickup ≤ 100 ms): p99 %s ms → %s (max %s ms; %d of %d samples over 100"
                + " ms). Partitions lost by consumers: %d.%n",
            GfKit.ms(Stats.percentile(c, 99)),
            Stats.percentile(c, 99) <= 100_000_000L ? "pass" : "FAIL",
            GfKit.ms(Stats.percentile(c, 100)),
            over,
            c.length,
            lost));
    return sb.toString();
  }

  private static void latencyRow(Table t, String what, long[] sorted, Object last) {
    t.row(
        what,
        sorted.length,
        GfKit.ms(Stats.percentile(sorted, 50)),
        GfKit.ms(Stats.percentile(sorted, 90)),
        GfKit.ms(Stats.percentile(sorted, 99)),
        GfKit.ms(Stats.percentile(sorted, 100)),
        last);
  }
}
