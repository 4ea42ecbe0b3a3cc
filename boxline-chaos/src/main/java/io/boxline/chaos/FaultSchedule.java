package io.boxline.chaos;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The seeded, replayable fault sequence. The same seed and role counts give the same faults in the
 * same order with the same gaps, targets and durations (wall-clock timing can only stretch: a fault
 * that takes long, such as a database restart, delays the ones after it). The opening faults cover
 * every kind once (a kill of each role, a pause, a database and a broker restart) in a seeded
 * order, so that even a short run injects each; after that kinds are drawn by weight.
 */
final class FaultSchedule {
  /** Pauses last at least this long past the group's member deadline. */
  static final long PAUSE_BASE_MILLIS = ChaosSetup.MEMBER_DEADLINE.toMillis() + 1_000;

  /** Cuts after the opening last 2–30 s. */
  static final int NET_CUT_MIN_MILLIS = 2_000;

  static final int NET_CUT_SPREAD_MILLIS = 28_000;

  private record Pick(Fault.Kind kind, Role role) {}

  private final Random random;
  private final Map<Role, Integer> counts;
  private final long meanGapMillis;
  private final List<Pick> opening = new ArrayList<>();
  private final int openingSize;
  private int number;

  FaultSchedule(long seed, Map<Role, Integer> counts, double meanGapSeconds) {
    this.random = new Random(seed);
    this.counts = counts;
    this.meanGapMillis = (long) (meanGapSeconds * 1000);
    for (Role r : Role.values()) {
      if (counts.getOrDefault(r, 0) > 0) {
        opening.add(new Pick(Fault.Kind.KILL, r));
      }
    }
    opening.add(new Pick(Fault.Kind.PAUSE, Role.CONSUMER));
    opening.add(new Pick(Fault.Kind.RESTART_DATABASE, null));
    opening.add(new Pick(Fault.Kind.RESTART_BROKER, null));
    opening.add(new Pick(Fault.Kind.NET_CUT, Role.CONSUMER));
    opening.add(new Pick(Fault.Kind.NET_RESET, Role.CONSUMER));
    opening.add(new Pick(Fault.Kind.NET_COMMIT_LOST, Role.PRODUCER));
    opening.add(new Pick(Fault.Kind.NET_SLOW, Role.PRODUCER));
    Collections.shuffle(opening, random);
    openingSize = opening.size();
  }

  /** How many faults the opening has: once these are injected, every kind has been. */
  int openingSize() {
    return openingSize;
  }

  Fault next() {
    number++;
    long gap = meanGapMillis / 2 + (long) (random.nextDouble() * meanGapMillis);
    boolean fromOpening = !opening.isEmpty();
    Pick pick = fromOpening ? opening.remove(0) : weighted();
    Role role = pick.role();
    return switch (pick.kind()) {
      case KILL ->
          new Fault(
              number,
              gap,
              pick.kind(),
              role,
              random.nextInt(counts.get(role)),
              200 + random.nextInt(1_500));
      case PAUSE ->
          new Fault(
              number,
              gap,
              pick.kind(),
              role,
              random.nextInt(counts.get(role)),
              PAUSE_BASE_MILLIS + random.nextInt(2_000));
      case NET_CUT ->
          new Fault(
              number,
              gap,
              pick.kind(),
              role,
              random.nextInt(counts.get(role)),
              // The opening's cut outlasts the member deadline and leaves time for the other
              // openers in a short run; later ones are 2–30 s, shorter and far longer than it.
              fromOpening
                  ? PAUSE_BASE_MILLIS + random.nextInt(2_000)
                  : NET_CUT_MIN_MILLIS + random.nextInt(NET_CUT_SPREAD_MILLIS + 1));
      case NET_RESET, NET_COMMIT_LOST ->
          new Fault(number, gap, pick.kind(), role, random.nextInt(counts.get(role)), 0);
      case NET_SLOW ->
          new Fault(
              number,
              gap,
              pick.kind(),
              role,
              random.nextInt(counts.get(role)),
              2_000 + random.nextInt(4_000));
      case RESTART_DATABASE, RESTART_BROKER -> new Fault(number, gap, pick.kind(), null, 0, 0);
    };
  }

  /**
   * Kills 9 : pauses 3 : database restarts 1 : broker restarts 1 : each network fault (cut, reset,
   * lost commit answer, slow link) 2.
   */
  private Pick weighted() {
    int r = random.nextInt(22);
    if (r < 9) {
      return new Pick(Fault.Kind.KILL, weightedRole());
    }
    if (r < 12) {
      return new Pick(Fault.Kind.PAUSE, weightedRole());
    }
    if (r < 14) {
      return new Pick(r == 12 ? Fault.Kind.RESTART_DATABASE : Fault.Kind.RESTART_BROKER, null);
    }
    Fault.Kind[] net = {
      Fault.Kind.NET_CUT, Fault.Kind.NET_RESET, Fault.Kind.NET_COMMIT_LOST, Fault.Kind.NET_SLOW
    };
    return new Pick(net[(r - 14) / 2], weightedRole());
  }

  /** Producers 3 : consumers 3 : relays 2 : workers 1, among the roles that have children. */
  private Role weightedRole() {
    while (true) {
      int r = random.nextInt(9);
      Role role = r < 3 ? Role.PRODUCER : r < 6 ? Role.CONSUMER : r < 8 ? Role.RELAY : Role.WORKER;
      if (counts.getOrDefault(role, 0) > 0) {
        return role;
      }
    }
  }
}
