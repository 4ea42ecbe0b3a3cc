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
 * A group of 1,024 members over 4,096 busy partitions, driven check-in by check-in through the
 * coordination store ({@link SimulatedGroup}): the members settle within the slack of their fair
 * share in a bounded number of rounds, every partition is held once at the epoch its owner
 * believes, and when 100 members stop checking in, the others take their partitions over after
 * their deadline and settle again. Run against every coordination store (memory, database, etcd,
 * Redis). Prints what it measured (rounds, seconds, calls, and the server's own counters where the
 * subclass reads them) on lines starting with {@code group-scale}.
 */
public abstract class GroupScaleBehaviour {
  protected static final int MEMBERS = 1024;
  protected static final int PARTITIONS = 4096;
  protected static final int KILLED = 100;

  /** Rounds until nothing moves after 1,024 members join at once (the algorithm alone needs 3). */
  protected static final int JOIN_ROUNDS = 8;

  /** Rounds after the dead members' deadline until every partition is held by a live member. */
  protected static final int TAKEOVER_ROUNDS = 2;

  /** Rounds after the takeover until nothing moves again. */
  protected static final int RESETTLE_ROUNDS = 6;

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
   * commandstats}); the test prints how much each grew during each phase. Empty by default.
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

  /** What one phase cost. */
  private record Phase(
      String name,
      int rounds,
      int turns,
      long nanos,
      Map<String, Long> calls,
      Map<String, Long> callNanos,
      Map<String, Long> server) {}

  private final class Meter {
    final String name;
    final long started = System.nanoTime();
    final Map<String, Long> calls = group.calls();
    final Map<String, Long> callNanos = group.callNanos();
    final Map<String, Long> server = serverCounters();
    int rounds;
    int turns;

    Meter(String name) {
      this.name = name;
    }

    Round count(Round r) {
      rounds++;
      turns += r.turns();
      return r;
    }

    Phase stop() {
      return new Phase(
          name,
          rounds,
          turns,
          System.nanoTime() - started,
          minus(group.calls(), calls),
          minus(group.callNanos(), callNanos),
          minus(serverCounters(), server));
    }
  }

  private static Map<String, Long> minus(Map<String, Long> after, Map<String, Long> before) {
    Map<String, Long> out = new TreeMap<>();
    after.forEach((k, v) -> out.put(k, v - before.getOrDefault(k, 0L)));
    out.values().removeIf(v -> v == 0);
    return out;
  }

  @Test
  void aThousandAndTwentyFourMembersSettleAndTakeOverFromAHundredDead() {
    long started = System.nanoTime();
    group =
        new SimulatedGroup(
            newStore(),
            "scale-" + UUID.randomUUID().toString().substring(0, 8),
            MEMBERS,
            PARTITIONS,
            threads(),
            Duration.ofSeconds(3));
    List<String> log = new ArrayList<>();

    // 1. Everyone joins at once: rounds until nothing moves.
    Meter join = new Meter("join");
    int moving = 0;
    Round r;
    while ((r = join.count(group.round())).moved()) {
      log.add(describe(r));
      System.out.println("group-scale " + storeName() + ": " + describe(r));
      moving++;
      assertThat(moving)
          .as("rounds until nothing moves (%s)\n%s", group.violations(), String.join("\n", log))
          .isLessThanOrEqualTo(JOIN_ROUNDS);
    }
    Phase joined = join.stop();
    State settled = group.state();
    assertThat(group.violations()).as("violations while joining").isEmpty();
    assertThat(settled)
        .as("after %d rounds\n%s", moving, String.join("\n", log))
        .returns(MEMBERS, State::live)
        .returns(PARTITIONS, State::leases)
        .returns(true, State::balanced);

    // 2. Settled: two more rounds move nothing (what a settled group costs).
    Meter quiet = new Meter("settled");
    for (int i = 0; i < 2; i++) {
      Round q = quiet.count(group.round());
      assertThat(q.moved()).as("a settled round moves nothing: %s", describe(q)).isFalse();
    }
    Phase stayed = quiet.stop();

    // 3. 100 members crash: after their deadline the others take their partitions over.
    List<String> victims = new ArrayList<>(group.memberIds());
    Collections.shuffle(victims, new Random(11));
    victims = victims.subList(0, KILLED);
    Duration deadline = group.ttl(); // what the victims wrote at their last check-in
    group.kill(victims);
    long killed = System.nanoTime();
    Meter takeover = new Meter("takeover");
    int roundsUntilGone = -1;
    int roundsUntilOwned = -1;
    double secondsUntilOwned = -1;
    int afterGone = 0;
    List<String> takeoverLog = new ArrayList<>();
    // Wall-clock bound: the deadline, then the rounds the takeover may take (and one round in
    // which the deadline passes), each at most as slow as the slowest so far, twice over.
    long bound =
        deadline.toNanos()
            + 2 * (TAKEOVER_ROUNDS + RESETTLE_ROUNDS + 2) * group.slowestRound().toNanos();
    State s;
    while (true) {
      Round t = takeover.count(group.round());
      s = group.state();
      takeoverLog.add(describe(t) + " " + s);
      System.out.println("group-scale " + storeName() + ": " + describe(t) + " " + s);
      if (roundsUntilGone < 0 && s.liveDead() == 0) {
        roundsUntilGone = takeover.rounds;
      }
      if (roundsUntilGone >= 0) {
        afterGone++;
      }
      if (roundsUntilOwned < 0 && s.allOwned()) {
        roundsUntilOwned = takeover.rounds;
        secondsUntilOwned = (System.nanoTime() - killed) / 1e9;
        assertThat(afterGone)
            .as("rounds from the deadline until every partition is held\n%s", takeoverLog)
            .isLessThanOrEqualTo(TAKEOVER_ROUNDS);
      }
      if (!t.moved() && s.balanced()) {
        break;
      }
      assertThat(afterGone)
          .as("rounds after the deadline until nothing moves\n%s", String.join("\n", takeoverLog))
          .isLessThanOrEqualTo(TAKEOVER_ROUNDS + RESETTLE_ROUNDS);
      assertThat(System.nanoTime() - killed)
          .as(
              "nanoseconds since the crash (deadline %s)\n%s",
              deadline, String.join("\n", takeoverLog))
          .isLessThanOrEqualTo(bound);
    }
    Phase tookOver = takeover.stop();
    assertThat(group.violations()).as("violations").isEmpty();
    assertThat(s)
        .returns(MEMBERS - KILLED, State::live)
        .returns(PARTITIONS, State::leases)
        .returns(true, State::balanced);
    assertThat(roundsUntilOwned).isPositive();

    // The figures.
    String who = "group-scale " + storeName() + ":";
    System.out.printf(
        Locale.ROOT,
        "%s %,d members, %,d partitions, %d at a time; deadline %s (slowest round %.2f s)%n",
        who,
        MEMBERS,
        PARTITIONS,
        threads(),
        deadline,
        group.slowestRound().toNanos() / 1e9);
    System.out.printf(
        Locale.ROOT,
        "%s settled within the slack ([%d, %d] each) after %d rounds that moved leases%n",
        who,
        settled.fairMin(),
        settled.fairMax(),
        moving);
    System.out.printf(
        Locale.ROOT,
        "%s %d crashed: gone after %d rounds, all partitions held after %d rounds (%.1f s),"
            + " settled again ([%d, %d] each) after %d rounds%n",
        who,
        KILLED,
        roundsUntilGone,
        roundsUntilOwned,
        secondsUntilOwned,
        s.fairMin(),
        s.fairMax(),
        takeover.rounds);
    for (Phase p : List.of(joined, stayed, tookOver)) {
      System.out.println(who + " " + describe(p));
    }
    System.out.printf(Locale.ROOT, "%s total %.1f s%n", who, (System.nanoTime() - started) / 1e9);
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
    double seconds = p.nanos() / 1e9;
    long calls = p.calls().values().stream().mapToLong(Long::longValue).sum();
    StringBuilder b =
        new StringBuilder(
            String.format(
                Locale.ROOT,
                "%s: %d rounds, %,d turns in %.2f s (%.0f check-ins/s); %,d calls (%.0f/s)",
                p.name(),
                p.rounds(),
                p.turns(),
                seconds,
                p.turns() / seconds,
                calls,
                calls / seconds));
    b.append(" {");
    String sep = "";
    for (Map.Entry<String, Long> e : p.calls().entrySet()) {
      long nanos = p.callNanos().getOrDefault(e.getKey(), 0L);
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
    if (!p.server().isEmpty()) {
      b.append("; server:");
      p.server()
          .forEach(
              (k, v) ->
                  b.append(
                      String.format(
                          Locale.ROOT,
                          " %s %,d (%.0f/s, %.1f per turn)",
                          k,
                          v,
                          v / seconds,
                          v / (double) p.turns())));
    }
    return b.toString();
  }
}
