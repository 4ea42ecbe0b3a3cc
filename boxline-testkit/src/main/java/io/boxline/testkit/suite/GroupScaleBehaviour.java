package io.boxline.testkit.suite;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.spi.CoordinationStore;
import io.boxline.testkit.suite.SimulatedGroup.Round;
import io.boxline.testkit.suite.SimulatedGroup.State;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A group of 1,024 members over 2,048 busy partitions (or as the system properties {@code
 * boxline.groupScale.members} and {@code boxline.groupScale.partitions} say), driven check-in by
 * check-in through the coordination store ({@link SimulatedGroup}): joining at once, the members
 * settle within the slack of their fair share in a bounded number of rounds, with every partition
 * held once, at the epoch its owner believes; when 100 of them crash, the others take their
 * partitions over in the round their deadline passes or the next, and settle again. Nothing is ever
 * held by two live members, epochs only grow, no live member loses a lease. Run against every
 * coordination store (memory, database, etcd, Redis).
 *
 * <p>Prints what it measured on lines starting with {@code group-scale}: every round, then per
 * phase (joining: the rounds that moved leases; settled: the round that moved none; takeover: from
 * the crash until settled again) the check-ins, the calls to the store with their mean latency, and
 * the server's own counters where the subclass reads them ({@link #serverCounters}).
 */
public abstract class GroupScaleBehaviour {
  protected static final int MEMBERS = Integer.getInteger("boxline.groupScale.members", 1024);
  protected static final int PARTITIONS = Integer.getInteger("boxline.groupScale.partitions", 2048);
  protected static final int KILLED = Math.max(1, MEMBERS * 100 / 1024);

  /**
   * Rounds that move leases after everyone joined at once. The rule alone, one member after the
   * other, needs 3 ({@code RebalanceTest}); here members check in 8 at a time, so the first few all
   * see an empty group and take everything, and give it back a round later.
   */
  protected static final int JOIN_ROUNDS = 8;

  /** The deadline the crashed members wrote at their last check-in. */
  protected static final Duration CRASHED_DEADLINE = Duration.ofSeconds(2);

  /**
   * Rounds after the one in which the crashed members' deadline passed until every partition is
   * held by a live member.
   */
  protected static final int TAKEOVER_ROUNDS = 1;

  /** Rounds after that until a round moves nothing again. */
  protected static final int RESETTLE_ROUNDS = 4;

  private SimulatedGroup group;

  /** A store to test; closed after the test. */
  protected abstract CoordinationStore newStore();

  /** The store's name in the printed figures. */
  protected abstract String storeName();

  /** How many members check in at once. */
  protected int threads() {
    return 8;
  }

  /**
   * The server's own counters, read now (for Redis: commands and their time from {@code INFO
   * commandstats}); the test prints how much each grew in each phase. Empty by default.
   */
  protected Map<String, Long> serverCounters() {
    return Map.of();
  }

  @AfterEach
  void closeGroup() {
    if (group != null) {
      group.close();
    }
  }

  /** What the rounds of one phase cost, added up round by round. */
  private static final class Phase {
    final String name;
    int rounds;
    int turns;
    long nanos;
    final Map<String, Long> calls = new TreeMap<>();
    final Map<String, Long> callNanos = new TreeMap<>();
    final Map<String, Long> server = new TreeMap<>();

    Phase(String name) {
      this.name = name;
    }
  }

  /** Counters before a round, to add what it cost to a phase. */
  private final class Snapshot {
    final long started = System.nanoTime();
    final Map<String, Long> calls = group.calls();
    final Map<String, Long> callNanos = group.callNanos();
    final Map<String, Long> server = serverCounters();

    void addTo(Phase p, Round r) {
      p.rounds++;
      p.turns += r.turns();
      p.nanos += System.nanoTime() - started;
      add(p.calls, group.calls(), calls);
      add(p.callNanos, group.callNanos(), callNanos);
      add(p.server, serverCounters(), server);
    }
  }

  private static void add(
      Map<String, Long> sum, Map<String, Long> after, Map<String, Long> before) {
    after.forEach(
        (k, v) -> {
          long d = v - before.getOrDefault(k, 0L);
          if (d != 0) {
            sum.merge(k, d, Long::sum);
          }
        });
  }

  private void print(String line) {
    System.out.println("group-scale " + storeName() + ": " + line);
  }

  @Test
  void aThousandAndTwentyFourMembersSettleAndTakeOverFromAHundredCrashed() {
    long started = System.nanoTime();
    group =
        new SimulatedGroup(
            newStore(),
            "scale-" + UUID.randomUUID().toString().substring(0, 8),
            MEMBERS,
            PARTITIONS,
            threads(),
            Duration.ofMinutes(2));
    print(
        String.format(
            Locale.ROOT,
            "%,d members (weight 1), %,d busy partitions, %d members checking in at a time",
            MEMBERS,
            PARTITIONS,
            threads()));
    List<String> log = new ArrayList<>();

    // 1. Everyone joins at once: rounds until one moves nothing.
    Phase joining = new Phase("joining");
    Phase settled = new Phase("settled");
    int moving = 0;
    while (true) {
      Snapshot before = new Snapshot();
      Round r = group.round();
      log.add(describe(r));
      print(describe(r));
      if (!r.moved()) {
        before.addTo(settled, r);
        break;
      }
      before.addTo(joining, r);
      moving++;
      assertThat(moving)
          .as("rounds that moved leases\n%s\n%s", String.join("\n", log), group.violations())
          .isLessThanOrEqualTo(JOIN_ROUNDS);
    }
    State joined = group.state();
    print("after joining: " + joined);
    assertThat(group.violations()).as("violations while joining").isEmpty();
    assertThat(joined)
        .as("after %d rounds\n%s", moving, String.join("\n", log))
        .returns(MEMBERS, State::live)
        .returns(PARTITIONS, State::leases)
        .returns(true, State::balanced);

    // 2. 100 members crash: once their deadline has passed, the others take their partitions.
    List<String> crashed = new ArrayList<>(group.memberIds());
    Collections.shuffle(crashed, new Random(11));
    crashed = List.copyOf(crashed.subList(0, KILLED));
    Phase takeover = new Phase("takeover");
    Snapshot atCrash = new Snapshot();
    group.kill(crashed, CRASHED_DEADLINE);
    long crashedAt = System.nanoTime();
    // The crashed members' last check-ins, counted with the takeover's first round.
    Snapshot pending = atCrash;
    int roundsUntilGone = -1;
    int roundsUntilHeld = -1;
    double secondsUntilHeld = -1;
    int rounds = 0;
    State s;
    while (true) {
      Snapshot before = pending != null ? pending : new Snapshot();
      pending = null;
      Round r = group.round();
      before.addTo(takeover, r);
      rounds++;
      s = group.state();
      log.add(describe(r) + "; then " + s);
      print(describe(r) + "; then " + s);
      if (roundsUntilGone < 0 && s.liveDead() == 0) {
        roundsUntilGone = rounds;
      }
      if (roundsUntilHeld < 0 && s.allOwned()) {
        roundsUntilHeld = rounds;
        secondsUntilHeld = (System.nanoTime() - crashedAt) / 1e9;
      }
      if (!r.moved() && s.balanced()) {
        break;
      }
      if (roundsUntilGone >= 0 && roundsUntilHeld < 0) {
        assertThat(rounds - roundsUntilGone)
            .as(
                "rounds after the crashed members' deadline until every partition is held\n%s",
                String.join("\n", log))
            .isLessThan(TAKEOVER_ROUNDS);
      }
      if (roundsUntilHeld >= 0) {
        assertThat(rounds - roundsUntilHeld)
            .as("rounds after the takeover until nothing moves\n%s", String.join("\n", log))
            .isLessThan(RESETTLE_ROUNDS);
      }
      assertThat(Duration.ofNanos(System.nanoTime() - crashedAt))
          .as("time since the crash, the deadline %s\n%s", CRASHED_DEADLINE, String.join("\n", log))
          .isLessThanOrEqualTo(
              CRASHED_DEADLINE.plus(group.slowestRound().multipliedBy(2 * (RESETTLE_ROUNDS + 2))));
    }
    assertThat(group.violations()).as("violations").isEmpty();
    assertThat(roundsUntilGone).as("rounds until the crashed members were gone").isPositive();
    assertThat(roundsUntilHeld - roundsUntilGone)
        .as("rounds from the deadline until every partition was held")
        .isLessThanOrEqualTo(TAKEOVER_ROUNDS);
    assertThat(s)
        .returns(MEMBERS - KILLED, State::live)
        .returns(PARTITIONS, State::leases)
        .returns(true, State::balanced);

    // The figures.
    print(
        String.format(
            Locale.ROOT,
            "settled within the slack ([%d, %d] each, all between %d and %d) after %d rounds that"
                + " moved leases",
            joined.fairMin(),
            joined.fairMax(),
            joined.fewest(),
            joined.most(),
            moving));
    print(
        String.format(
            Locale.ROOT,
            "%d crashed (deadline %s): gone from the view after %d round(s), all partitions held"
                + " by the others after %d round(s) (%.1f s after the crash), settled again ([%d,"
                + " %d] each) after %d rounds",
            KILLED,
            CRASHED_DEADLINE,
            roundsUntilGone,
            roundsUntilHeld,
            secondsUntilHeld,
            s.fairMin(),
            s.fairMax(),
            rounds));
    print(
        String.format(
            Locale.ROOT,
            "live members' deadline %s (the slowest round %.2f s)",
            group.ttl(),
            group.slowestRound().toNanos() / 1e9));
    for (Phase p : List.of(joining, settled, takeover)) {
      print(describe(p));
    }
    print(String.format(Locale.ROOT, "total %.1f s", (System.nanoTime() - started) / 1e9));
  }

  private static String describe(Round r) {
    return String.format(
        Locale.ROOT,
        "round %d: %d turns, %d acquired (%d contested), %d marked releasing, %d released,"
            + " %d reclaimed, %d lost, %.2f s",
        r.number(),
        r.turns(),
        r.acquired(),
        r.contested(),
        r.marked(),
        r.released(),
        r.reclaimed(),
        r.lost(),
        r.seconds());
  }

  private static String describe(Phase p) {
    double seconds = p.nanos / 1e9;
    long calls = p.calls.values().stream().mapToLong(Long::longValue).sum();
    StringBuilder b =
        new StringBuilder(
            String.format(
                Locale.ROOT,
                "%s: %d rounds, %,d turns in %.2f s (%.0f check-ins/s); %,d calls (%.0f/s)",
                p.name,
                p.rounds,
                p.turns,
                seconds,
                p.turns / seconds,
                calls,
                calls / seconds));
    b.append(" {");
    String sep = "";
    for (Map.Entry<String, Long> e : p.calls.entrySet()) {
      long nanos = p.callNanos.getOrDefault(e.getKey(), 0L);
      b.append(sep)
          .append(
              String.format(
                  Locale.ROOT,
                  "%s %,d (%.2f ms each)",
                  e.getKey(),
                  e.getValue(),
                  nanos / 1e6 / e.getValue()));
      sep = ", ";
    }
    b.append('}');
    if (!p.server.isEmpty()) {
      b.append("; server:");
      p.server.forEach(
          (k, v) ->
              b.append(
                  String.format(
                      Locale.ROOT,
                      " %s %,d (%.0f/s, %.1f per turn)",
                      k,
                      v,
                      v / seconds,
                      v / (double) p.turns)));
    }
    return b.toString();
  }
}
