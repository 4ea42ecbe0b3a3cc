package io.boxline.chaos;

import io.boxline.testing.BoxlineTesting;
import io.boxline.testkit.sim.SimResult;
import io.boxline.testkit.sim.SimSettings;
import io.boxline.testkit.sim.Simulation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The long run of the deterministic simulation: {@code seeds} seeds from {@code from}, each with
 * {@link SimSettings#forSeed}, on {@code threads} threads, printing progress every ten seconds and
 * every failing seed (with the command that replays it). Exit status 1 when a seed failed.
 *
 * <pre>
 * java -cp … io.boxline.chaos.SimulateMain seeds=1000000 from=1 threads=1
 * </pre>
 */
public final class SimulateMain {
  private SimulateMain() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> o = new TreeMap<>();
    for (String a : args) {
      int eq = a.indexOf('=');
      if (eq < 1) {
        throw new IllegalArgumentException("arguments are name=value, got '" + a + "'");
      }
      o.put(a.substring(0, eq), a.substring(eq + 1));
    }
    long seeds = Long.parseLong(o.getOrDefault("seeds", "10000"));
    long from = Long.parseLong(o.getOrDefault("from", "1"));
    int threads = Integer.parseInt(o.getOrDefault("threads", "1"));
    AtomicLong next = new AtomicLong(from);
    AtomicLong done = new AtomicLong();
    AtomicLong published = new AtomicLong();
    AtomicLong handled = new AtomicLong();
    AtomicLong faults = new AtomicLong();
    AtomicLong stale = new AtomicLong();
    List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
    long end = from + seeds;
    long t0 = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<?>> work = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      work.add(
          pool.submit(
              () -> {
                for (long seed = next.getAndIncrement();
                    seed < end;
                    seed = next.getAndIncrement()) {
                  SimResult r =
                      Simulation.run(
                          seed, SimSettings.forSeed(seed), BoxlineTesting::inMemoryStore);
                  published.addAndGet(r.published());
                  handled.addAndGet(r.handled());
                  faults.addAndGet(r.faults().values().stream().mapToInt(i -> i).sum());
                  stale.addAndGet(r.recoveries().getOrDefault("stale settlement refused", 0));
                  if (!r.passed()) {
                    failures.add(r.summary());
                    System.out.println(
                        r.summary()
                            + "\n  replay: ./mvnw -o -pl boxline-testkit verify"
                            + " -Dtest=SimulationTest#aSeedReplays -Dboxline.sim.replay="
                            + seed
                            + " -Dboxline.sim.trace=true");
                  }
                  done.incrementAndGet();
                }
              }));
    }
    pool.shutdown();
    while (!pool.awaitTermination(10, TimeUnit.SECONDS)) {
      System.out.printf(
          "%,d of %,d seeds, %,d failed, %.0f s%n",
          done.get(), seeds, failures.size(), (System.nanoTime() - t0) / 1e9);
    }
    for (Future<?> f : work) {
      f.get();
    }
    System.out.printf(
        "simulation done: %,d seeds (%d to %d) in %.0f s; %,d events published, %,d handled, %,d"
            + " faults, %,d stale settlements refused; %d seeds failed%n",
        done.get(),
        from,
        end - 1,
        (System.nanoTime() - t0) / 1e9,
        published.get(),
        handled.get(),
        faults.get(),
        stale.get(),
        failures.size());
    System.exit(failures.isEmpty() ? 0 : 1);
  }
}
