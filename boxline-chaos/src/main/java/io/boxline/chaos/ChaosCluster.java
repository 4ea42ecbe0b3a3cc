package io.boxline.chaos;

import io.boxline.testkit.net.FaultProxy;
import io.boxline.testkit.process.ChildJvm;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The child JVMs of a run, by role and index: starts each incarnation, kills and restarts, pauses
 * and resumes, restarts a child that died on its own (counted), stops everything with bounded
 * waits, and sums the counters the incarnations wrote to their status files.
 */
final class ChaosCluster implements AutoCloseable {
  private final ChaosOptions options;
  private final ChaosDatabase db;
  private final String schema;
  private final String natsUrl;
  private final Path logDir;
  private final Path statusDir;
  private final Map<Role, ChildJvm[]> children = new EnumMap<>(Role.class);
  private final Map<String, Integer> runs = new HashMap<>();

  /** Each child slot's link to the database: every incarnation of the slot connects through it. */
  private final Map<String, FaultProxy> links = new HashMap<>();

  private int unexpectedExits;

  ChaosCluster(ChaosOptions options, ChaosDatabase db, String natsUrl, Path runDir) {
    this.options = options;
    this.db = db;
    this.schema = db.schema();
    this.natsUrl = natsUrl;
    this.logDir = runDir.resolve("logs");
    this.statusDir = runDir.resolve("status");
    try {
      Files.createDirectories(logDir);
      Files.createDirectories(statusDir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    children.put(Role.PRODUCER, new ChildJvm[options.producers]);
    children.put(Role.CONSUMER, new ChildJvm[options.consumers]);
    children.put(Role.RELAY, new ChildJvm[options.relays]);
    children.put(Role.WORKER, new ChildJvm[options.workers]);
  }

  Map<Role, Integer> counts() {
    Map<Role, Integer> m = new EnumMap<>(Role.class);
    children.forEach((r, a) -> m.put(r, a.length));
    return m;
  }

  Path logDir() {
    return logDir;
  }

  synchronized void startAll(Role role) {
    for (int i = 0; i < children.get(role).length; i++) {
      start(role, i);
    }
  }

  /** Waits (bounded) until every current incarnation printed READY. */
  void awaitReady(Duration max) {
    long deadline = System.nanoTime() + max.toNanos();
    for (ChildJvm[] group : children.values()) {
      for (ChildJvm c : group) {
        while (!c.output().contains("READY")) {
          if (!c.isAlive()) {
            throw new IllegalStateException(c + " exited before READY:\n" + c.tail(40));
          }
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException(c + " not READY within " + max + ":\n" + c.tail(40));
          }
          ChildArgs.sleepQuietly(Duration.ofMillis(100));
        }
      }
    }
  }

  private void start(Role role, int index) {
    String key = role.label + "-" + index;
    int run = runs.merge(key, 1, Integer::sum);
    List<String> args = new ArrayList<>();
    args.add("--role=" + role.label);
    args.add("--index=" + index);
    args.add("--run=" + run);
    args.add("--schema=" + schema);
    args.add("--url=" + link(role, index).jdbcUrlThrough(db.url()));
    args.add("--user=" + db.user());
    args.add("--app=chaos-" + key);
    args.add("--statusDir=" + statusDir);
    args.add("--seed=" + options.seed);
    switch (role) {
      case PRODUCER -> {
        args.add("--threads=" + options.producerThreads);
        args.add("--rate=" + options.producerRate);
        args.add("--maxEvents=" + options.maxEventsPerTransaction);
        args.add("--keys=" + options.keysPerThread);
      }
      case CONSUMER, WORKER -> {
        args.add("--batch=" + options.batch);
        args.add("--concurrency=" + options.concurrency);
      }
      case RELAY -> {
        args.add("--batch=" + options.batch * 5);
        args.add("--concurrency=" + options.concurrency);
        args.add("--nats=" + natsUrl);
      }
    }
    children.get(role)[index] =
        ChildJvm.start(
            new ChildJvm.Spec(key + "-run" + run, role.main)
                .logDirectory(logDir)
                // Small heaps and no C2: up to a dozen of these share two cores.
                .jvmArgs("-Xmx192m", "-XX:TieredStopAtLevel=1")
                .args(args.toArray(String[]::new))
                .env(ChaosDatabase.PASSWORD_ENV, db.password()));
  }

  /** The fault proxy between the child slot and the database, opened on first use. */
  synchronized FaultProxy link(Role role, int index) {
    return links.computeIfAbsent(
        role.label + "-" + index,
        k -> {
          java.net.URI target = java.net.URI.create(db.url().substring("jdbc:".length()));
          return FaultProxy.start(target.getHost(), target.getPort());
        });
  }

  /** SIGKILL, wait {@code restartDelay}, start the next incarnation. */
  void killAndRestart(Role role, int index, Duration restartDelay) {
    ChildJvm c;
    synchronized (this) {
      c = children.get(role)[index];
      children.get(role)[index] = null; // not "dead on its own" while it is being restarted
    }
    c.kill9();
    ChildArgs.sleepQuietly(restartDelay); // part of the fault: how long the child stays dead
    synchronized (this) {
      start(role, index);
    }
  }

  /** SIGSTOP for {@code length}, then SIGCONT. */
  void pause(Role role, int index, Duration length) {
    ChildJvm c;
    synchronized (this) {
      c = children.get(role)[index];
    }
    c.pause();
    try {
      ChildArgs.sleepQuietly(length); // part of the fault: how long the child stays frozen
    } finally {
      c.resume();
    }
  }

  /** Restarts children that exited without being told to (counted; their tail is printed). */
  synchronized void restartDead() {
    for (Map.Entry<Role, ChildJvm[]> e : children.entrySet()) {
      ChildJvm[] group = e.getValue();
      for (int i = 0; i < group.length; i++) {
        if (group[i] != null && !group[i].isAlive()) {
          unexpectedExits++;
          System.out.println(
              "!! "
                  + group[i]
                  + " exited on its own; restarting. Its last lines:\n"
                  + group[i].tail(15));
          start(e.getKey(), i);
        }
      }
    }
  }

  synchronized int unexpectedExits() {
    return unexpectedExits;
  }

  /** Graceful stop of one role (closes stdin), bounded; returns how many had to be killed. */
  int stop(Role role, Duration each) {
    ChildJvm[] group;
    synchronized (this) {
      group = children.get(role);
      children.put(role, new ChildJvm[0]);
    }
    int killed = 0;
    for (ChildJvm c : group) {
      if (c != null && c.stop(each) < 0) {
        killed++;
      }
    }
    return killed;
  }

  /** Sums a counter over the status files of every incarnation so far. */
  long sum(String counter) {
    long total = 0;
    try (Stream<Path> files = Files.list(statusDir)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".status")).toList()) {
        for (String line : Files.readAllLines(f)) {
          if (line.startsWith(counter + "=")) {
            total += Long.parseLong(line.substring(counter.length() + 1).trim());
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return total;
  }

  @Override
  public synchronized void close() {
    for (ChildJvm[] group : children.values()) {
      for (ChildJvm c : group) {
        if (c != null && c.isAlive()) {
          c.kill9();
        }
      }
    }
    links.values().forEach(FaultProxy::close);
  }
}
