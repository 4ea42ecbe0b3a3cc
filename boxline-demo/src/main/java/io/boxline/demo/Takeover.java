package io.boxline.demo;

import io.boxline.Boxline;
import io.boxline.GroupPolicy;
import io.boxline.GroupState;
import io.boxline.PartitionListener;
import io.boxline.TopicPartition;
import io.boxline.demo.DemoOptions.CoordinationKind;
import java.io.PrintStream;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The takeover scenario: "billing" gets two members, each a {@link MemberProcess}. Once a third of
 * the orders are published, the first is killed in the middle of a batch; the second takes over its
 * partitions when the dead member's check-in deadline has passed. This prints who held what, the
 * kill and what was in flight, and each partition's takeover with how long it took; the
 * verification then allows exactly those redeliveries ({@link #crash()}).
 */
final class Takeover implements AutoCloseable {
  static final String SUBSCRIPTION = "billing";

  /**
   * Short group timings so that the takeover takes about a second (the defaults, made for large
   * groups: check-ins every 2 s, dead after 6 s). Idle partitions stay leased for the whole run, so
   * that who holds what stays readable.
   */
  static final GroupPolicy POLICY =
      GroupPolicy.DEFAULT
          .withCheckInRate(10)
          .withMinCheckInInterval(Duration.ofMillis(200))
          .withDeadlineMultiplier(5)
          .withIdleRelease(Duration.ofMinutes(10));

  private static final Duration KILL_WAIT = Duration.ofSeconds(60);
  private static final Duration TAKEOVER_WAIT = Duration.ofSeconds(30);

  private final PrintStream out;
  private final Boxline main;
  private final Deliveries billing;
  private final MemberProcess victim;
  private final MemberProcess survivor;

  /** When the survivor was last assigned each partition (System.nanoTime()). */
  private final Map<Integer, Long> assignedAt;

  private Thread director;

  // Written by the director thread, read after it ended.
  private volatile String problem = "the run ended before the kill";
  private volatile Set<Integer> orphaned = Set.of();
  private volatile Map<Integer, Long> takenAfterNanos = Map.of();
  private Set<Integer> survivorAtEnd = Set.of();
  private boolean closed;

  private Takeover(
      PrintStream out,
      Boxline main,
      Deliveries billing,
      MemberProcess victim,
      MemberProcess survivor,
      Map<Integer, Long> assignedAt) {
    this.out = out;
    this.main = main;
    this.billing = billing;
    this.victim = victim;
    this.survivor = survivor;
    this.assignedAt = assignedAt;
  }

  /** Starts billing's two members (the subscription exists); {@link #run} brings the kill. */
  static Takeover start(
      PrintStream out,
      DemoDatabase db,
      DemoCoordination coordination,
      Boxline main,
      Deliveries billing) {
    main.admin().setGroupPolicy(SUBSCRIPTION, POLICY); // before the members' first check-in
    Map<Integer, Long> assignedAt = new ConcurrentHashMap<>();
    PartitionListener timing =
        new PartitionListener() {
          @Override
          public void onAssigned(Set<TopicPartition> partitions) {
            long now = System.nanoTime();
            partitions.forEach(p -> assignedAt.put(p.partition(), now));
          }
        };
    String a = SUBSCRIPTION + "-a";
    String b = SUBSCRIPTION + "-b";
    MemberProcess victim = member(a, db, coordination, billing, new PartitionListener() {});
    MemberProcess survivor;
    try {
      survivor = member(b, db, coordination, billing, timing);
    } catch (RuntimeException | Error e) {
      victim.close();
      throw e;
    }
    out.printf(
        Locale.ROOT,
        "Takeover: %s has two members, %s and %s, each with a Boxline instance, connection pool%n"
            + "  and coordination client of its own; %s is killed in the middle of a batch once a"
            + " third of the%n  orders are published. Group timings are short for the demo: check-ins"
            + " every %d ms, a member is%n  dead %d ms after its last one.%n",
        SUBSCRIPTION,
        a,
        b,
        a,
        POLICY.checkInInterval(2).toMillis(),
        POLICY.deadline(2).toMillis());
    if (coordination.kind == CoordinationKind.etcd) {
      out.printf(
          "  In etcd a member's key lives on an etcd lease of whole seconds, at least etcd's minimum"
              + " TTL%n  (about 2 s): the takeover waits for that.%n");
    }
    return new Takeover(out, main, billing, victim, survivor, assignedAt);
  }

  private static MemberProcess member(
      String id,
      DemoDatabase db,
      DemoCoordination coordination,
      Deliveries billing,
      PartitionListener listener) {
    return MemberProcess.start(
        id,
        SUBSCRIPTION,
        db,
        coordination,
        billing.handler(id),
        listener,
        Demo.CONCURRENCY,
        Demo.BATCH_SIZE);
  }

  /**
   * Starts the thread that kills the first member once {@code published} reaches a third of {@code
   * events}, then reports the takeover; {@code stamp} is the time of the progress lines.
   */
  void run(LongSupplier published, int events, Supplier<String> stamp) {
    director = new Thread(() -> direct(published, events, stamp), "demo-takeover");
    director.setDaemon(true);
    director.start();
  }

  private void direct(LongSupplier published, int events, Supplier<String> stamp) {
    long third = Math.max(1, events / 3);
    if (!await(
        KILL_WAIT,
        () ->
            published.getAsLong() >= third
                && victim.handled() > 0
                && !victim.partitions().isEmpty()
                && !survivor.partitions().isEmpty())) {
      problem =
          Thread.currentThread().isInterrupted()
              ? "the run ended before the two members both held partitions and had handled events"
              : "the two members did not both hold partitions and handle events within "
                  + KILL_WAIT;
      out.println(stamp.get() + " FAILED: " + problem);
      return;
    }
    out.printf(
        Locale.ROOT,
        "%s %s holds partitions %s, %s holds %s; they handled %d and %d events%n",
        stamp.get(),
        victim.id,
        victim.partitions(),
        survivor.id,
        survivor.partitions(),
        victim.handled(),
        survivor.handled());
    long killedAt;
    try {
      killedAt = victim.killMidBatch(Duration.ofSeconds(10));
    } catch (InterruptedException e) {
      problem = "the run ended before the kill";
      return;
    }
    // The store's view: a lease being handed over counts too. The cursors can move no more.
    Set<Integer> orphans = new TreeSet<>();
    Map<Integer, Long> cursor = new HashMap<>();
    for (GroupState.Partition p : main.admin().group(SUBSCRIPTION).partitions()) {
      cursor.put(p.lag().partition(), p.lag().position());
      if (victim.id.equals(p.owner())) {
        orphans.add(p.lag().partition());
      }
    }
    Map<Integer, Integer> inFlight = new TreeMap<>();
    for (Deliveries.Delivery d : billing.snapshot()) {
      if (d.member().equals(victim.id) && d.sequence() > cursor.getOrDefault(d.partition(), 0L)) {
        inFlight.merge(d.partition(), 1, Integer::sum);
      }
    }
    orphaned = orphans;
    int inFlightTotal = inFlight.values().stream().mapToInt(Integer::intValue).sum();
    String pad = " ".repeat(stamp.get().length());
    out.printf(
        Locale.ROOT,
        "%s KILLED %s, holding partitions %s: no more check-ins, connections or handler calls,"
            + " and it did not leave the group%n",
        stamp.get(),
        victim.id,
        orphans);
    int bound = Demo.CONCURRENCY * Demo.BATCH_SIZE;
    if (inFlightTotal == 0) {
      out.printf(
          Locale.ROOT,
          "%s in flight: nothing (its cursors were committed up to the last event it handled), so"
              + " nothing comes twice;%n%s had a batch been under way, it would be delivered again:"
              + " at most %d workers x %d events per batch = %d%n",
          pad,
          pad,
          Demo.CONCURRENCY,
          Demo.BATCH_SIZE,
          bound);
    } else {
      out.printf(
          Locale.ROOT,
          "%s in flight: %d event%s %s had handled without the cursor commit (%s);%n"
              + "%s %s will deliver %s again, and no others: at most %d workers x %d events per"
              + " batch = %d%n",
          pad,
          inFlightTotal,
          inFlightTotal == 1 ? "" : "s",
          victim.id,
          SubscriptionCheck.perPartition(inFlight),
          pad,
          survivor.id,
          inFlightTotal == 1 ? "it" : "them",
          Demo.CONCURRENCY,
          Demo.BATCH_SIZE,
          bound);
    }

    Map<Integer, Long> taken = new TreeMap<>();
    boolean all =
        await(
            TAKEOVER_WAIT,
            () -> {
              for (int p : orphans) {
                Long at = assignedAt.get(p);
                if (at != null && at - killedAt > 0) {
                  taken.putIfAbsent(p, at - killedAt);
                }
              }
              return taken.keySet().containsAll(orphans);
            });
    takenAfterNanos = Map.copyOf(taken);
    taken.forEach(
        (p, after) ->
            out.printf(
                Locale.ROOT,
                "%s %s took over partition %d %d ms after the kill%n",
                pad,
                survivor.id,
                p,
                after / 1_000_000));
    if (!all) {
      Set<Integer> left = new TreeSet<>(orphans);
      left.removeAll(taken.keySet());
      problem = survivor.id + " did not take over partitions " + left + " within " + TAKEOVER_WAIT;
      out.println(stamp.get() + " FAILED: " + problem);
      return;
    }
    problem = null;
    out.printf(
        Locale.ROOT,
        "%s takeover complete %d ms after the kill: %s holds partitions %s%n",
        stamp.get(),
        taken.values().stream().mapToLong(Long::longValue).max().orElse(0) / 1_000_000,
        survivor.id,
        survivor.partitions());
  }

  /** Polls {@code condition} until true or {@code max} has passed; whether it became true. */
  private static boolean await(Duration max, BooleanSupplier condition) {
    long deadline = System.nanoTime() + max.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      try {
        Thread.sleep(5); // polling a condition, with a deadline
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return true;
  }

  /**
   * The crash the verification of {@link #SUBSCRIPTION} must allow for; null when there was none
   * (then every event must come exactly once).
   */
  SubscriptionCheck.Crash crash() {
    return orphaned.isEmpty()
        ? null
        : new SubscriptionCheck.Crash(
            victim.id, survivor.id, orphaned, Demo.CONCURRENCY, Demo.BATCH_SIZE);
  }

  /**
   * The takeover's own checks: the kill happened, the survivor took over every orphaned partition
   * and, at the end, held every partition that has events ({@code lastSequence} by partition).
   */
  void verify(Verdicts verdicts, Map<Integer, Long> lastSequence) {
    if (problem != null) {
      verdicts.check(false, "", "takeover: " + problem);
      return;
    }
    long fastest = takenAfterNanos.values().stream().mapToLong(Long::longValue).min().orElse(0);
    long slowest = takenAfterNanos.values().stream().mapToLong(Long::longValue).max().orElse(0);
    verdicts.check(
        true,
        String.format(
            Locale.ROOT,
            "takeover: %s was killed holding partitions %s; %s took over every one of them, %s"
                + " ms after the kill",
            victim.id,
            orphaned,
            survivor.id,
            fastest / 1_000_000 == slowest / 1_000_000
                ? Long.toString(slowest / 1_000_000)
                : fastest / 1_000_000 + " to " + slowest / 1_000_000),
        "");
    Set<Integer> withEvents = new TreeSet<>();
    lastSequence.forEach(
        (p, last) -> {
          if (last > 0) {
            withEvents.add(p);
          }
        });
    verdicts.check(
        survivorAtEnd.equals(withEvents),
        "takeover: at the end "
            + survivor.id
            + " held all "
            + withEvents.size()
            + " partitions with events",
        "takeover: at the end "
            + survivor.id
            + " held partitions "
            + survivorAtEnd
            + ", not those with events "
            + withEvents);
  }

  /** Waits for the director; notes what the survivor holds; stops both members. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (director != null) {
        // It ends within milliseconds of the takeover, long before the run drained; if it still
        // waits for the moment to kill, the run ended first.
        director.join(2_000);
        director.interrupt();
        director.join(2_000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    survivorAtEnd = survivor.partitions();
    try {
      survivor.close();
    } finally {
      victim.close();
    }
  }
}
