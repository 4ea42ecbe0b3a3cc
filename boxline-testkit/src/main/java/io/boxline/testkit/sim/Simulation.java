package io.boxline.testkit.sim;

import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.NamespacePath;
import io.boxline.RetentionPolicy;
import io.boxline.Sequencing;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Store;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;

/**
 * A deterministic simulation of Boxline's store protocol: producers, two competing sequencers and a
 * consumer group's members take turns chosen by a seeded scheduler against one store, on a clock
 * that moves only when the scheduler moves it, with faults from the same seed (lost calls before or
 * after the store ran them, lost commit answers, rollbacks, stalls past lease deadlines, crashes,
 * clock jumps). After every step {@link Ledger} checks the chaos checker's invariants; after the
 * faults stop, a drain runs until every event is settled, and the end state is checked.
 *
 * <p>Everything runs in the calling thread and every choice comes from the seed, so a seed replays
 * exactly: same steps, same outcomes, same {@link SimResult#trace()}. The store must be one that
 * starts no threads of its own for the calls made (the in-memory store).
 */
public final class Simulation {
  /** The largest batch a member reads (duplicates after an incident are bounded by it). */
  static final int MAX_BATCH = 32;

  /** With {@code -Dboxline.sim.trace=true} every step is printed (for replaying one seed). */
  private static final boolean TRACE = Boolean.getBoolean("boxline.sim.trace");

  private Simulation() {}

  private static long traced(long trace, String step) {
    if (TRACE) {
      System.out.println(step);
    }
    return trace * 31 + step.hashCode();
  }

  /** Runs {@code seed} with {@code settings} on a new store made by {@code stores} on its clock. */
  public static SimResult run(long seed, SimSettings settings, Function<Clock, Store> stores) {
    Random root = new Random(seed);
    SimClock clock = new SimClock();
    Faults faults = new Faults(new Random(root.nextLong()), settings.faultRate());
    Random scheduler = new Random(root.nextLong());
    try (Store store = stores.apply(clock)) {
      store.migrate();
      NamespacePath ns = NamespacePath.of("sim");
      store.createNamespace(ns);
      TopicName name = TopicName.of(ns, "events");
      TopicInfo topic = store.createTopic(name, settings.partitions(), Sequencing.SEQUENCER);
      store.setRetention(topic.id(), RetentionPolicy.bySize(4));
      SubscriptionInfo sub = store.createSubscription(SubscriptionSpec.of("sim-group", name));
      Ledger ledger =
          new Ledger(
              store, clock, topic.id(), sub.id(), settings.partitions(), settings.transactional());

      List<SimProducer> producers = new ArrayList<>();
      for (int i = 0; i < settings.producers(); i++) {
        producers.add(
            new SimProducer(
                i,
                store,
                topic.id(),
                settings.partitions(),
                settings.keysPerProducer(),
                clock,
                new Random(root.nextLong()),
                faults,
                ledger));
      }
      List<SimSequencer> sequencers = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        sequencers.add(
            new SimSequencer(i, store, new Random(root.nextLong()), faults, settings.leaseTtl()));
      }
      List<SimMember> members = new ArrayList<>();
      for (int i = 0; i < settings.members(); i++) {
        members.add(
            new SimMember(
                "member-" + i,
                store,
                sub,
                topic.id(),
                settings.partitions(),
                settings.transactional(),
                clock,
                new Random(root.nextLong()),
                faults,
                ledger,
                settings.leaseTtl()));
      }
      Run run =
          new Run(
              settings, store, clock, faults, scheduler, ledger, producers, sequencers, members);
      long trace = 17;
      int step = 0;
      try {
        for (; step < settings.steps(); step++) {
          trace = traced(trace, run.step(step, true));
        }
        faults.off();
        int drained = 0;
        while (!run.done(topic.id(), sub.id())) {
          if (drained++ >= settings.drainSteps()) {
            ledger.violation(
                "not settled "
                    + settings.drainSteps()
                    + " fault-free steps after the faults"
                    + " stopped");
            break;
          }
          trace = traced(trace, run.step(step++, false));
        }
      } catch (RuntimeException e) {
        ledger.violation("the store threw " + e);
      }
      Set<UUID> dead = new HashSet<>();
      for (DeadLetter d : store.deadLetters(sub.id(), DeadLetterQuery.of(sub.name()))) {
        dead.add(d.event().id());
      }
      Ledger.Counts c = ledger.finish(dead);
      return new SimResult(
          seed,
          settings,
          step,
          c.published(),
          c.unknown(),
          c.logged(),
          c.handled(),
          c.deadLettered(),
          c.duplicates(),
          c.bound(),
          faults.counts(),
          new java.util.TreeMap<>(ledger.happened()),
          trace,
          List.copyOf(ledger.violations()));
    }
  }

  /** One run's actors and its scheduler. */
  private record Run(
      SimSettings settings,
      Store store,
      SimClock clock,
      Faults faults,
      Random scheduler,
      Ledger ledger,
      List<SimProducer> producers,
      List<SimSequencer> sequencers,
      List<SimMember> members,
      int[] stalled) {
    Run(
        SimSettings settings,
        Store store,
        SimClock clock,
        Faults faults,
        Random scheduler,
        Ledger ledger,
        List<SimProducer> producers,
        List<SimSequencer> sequencers,
        List<SimMember> members) {
      this(
          settings,
          store,
          clock,
          faults,
          scheduler,
          ledger,
          producers,
          sequencers,
          members,
          new int[producers.size() + sequencers.size() + members.size()]);
    }

    /** One step: the clock moves, one actor takes a turn, the ledger checks. */
    String step(int step, boolean producing) {
      ledger.step(step);
      clock.advance(Duration.ofMillis(1 + scheduler.nextInt(20)));
      if (faults.hit("clock jump")) {
        clock.advance(Duration.ofMillis(scheduler.nextLong(2 * settings.leaseTtl().toMillis())));
      }
      String what;
      if (scheduler.nextInt(100) < 3) {
        what =
            "retention: "
                + store
                    .purge(Duration.ofDays(1), Duration.ofDays(1), Duration.ofDays(1), 100)
                    .events()
                + " purged";
        ledger.check();
        ledger.checkRetained();
        return step + " " + what;
      }
      int actors = stalled.length;
      int a = scheduler.nextInt(actors);
      while (!producing && a < producers.size() && producers.get(a).idle()) {
        a = scheduler.nextInt(actors); // the drain: producers with nothing to publish again rest
      }
      String actor = name(a);
      if (stalled[a] > 0) {
        stalled[a]--;
        what = "stalled";
      } else if (faults.hit("stall")) {
        stalled[a] = 1 + scheduler.nextInt(120);
        what = "stalls for " + stalled[a] + " steps";
      } else if (faults.hit("crash")) {
        crash(a);
        what = "crashed";
      } else {
        what = turn(a, producing);
      }
      ledger.check();
      return step + " " + actor + ": " + what;
    }

    private String name(int a) {
      int p = producers.size();
      int s = sequencers.size();
      return a < p
          ? producers.get(a).name()
          : a < p + s ? sequencers.get(a - p).name() : members.get(a - p - s).name();
    }

    private void crash(int a) {
      int p = producers.size();
      int s = sequencers.size();
      if (a < p) {
        return; // a producer's crash is a rollback of the transaction it had open: one more turn
      } else if (a < p + s) {
        sequencers.get(a - p).crash();
      } else {
        members.get(a - p - s).crash();
      }
    }

    private String turn(int a, boolean producing) {
      int p = producers.size();
      int s = sequencers.size();
      if (a < p) {
        return producers.get(a).turn(producing);
      } else if (a < p + s) {
        return sequencers.get(a - p).turn();
      }
      return members.get(a - p - s).turn();
    }

    /** Whether the drain is over: nothing to publish again, sequence, deliver or retry. */
    boolean done(long topicId, long subscriptionId) {
      if (!producers.stream().allMatch(SimProducer::idle)) {
        return false;
      }
      if (store.outboxBacklog().events() > 0 || !ledger.settledAll()) {
        return false;
      }
      for (int p = 0; p < settings.partitions(); p++) {
        if (!store
            .parked(subscriptionId, PartitionKey.of(topicId, p), false)
            .blockedKeys()
            .isEmpty()) {
          return false;
        }
      }
      return true;
    }
  }
}
