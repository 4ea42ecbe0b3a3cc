package io.boxline.testkit.suite;

import io.boxline.GroupPolicy;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.MemberStatus;
import io.boxline.spi.PartitionKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * A consumer group of many members driven through a {@link CoordinationStore}, round by round: in a
 * round every live member takes one turn, making the calls a Java consumer's group thread makes at
 * a check-in (boxline-core's {@code GroupMembership}), in a pool of threads so that members race
 * each other as they do in production:
 *
 * <ol>
 *   <li>{@code checkIn} (heartbeat and view), and {@code policy} when the view's stamp changed;
 *   <li>notice leases it thought it held that the view gives to someone else (counted as lost);
 *       give back leases under its id it does not know of;
 *   <li>{@code reclaim} when the view shows a lease of a member that is not live, or one RELEASING
 *       past the grace;
 *   <li>plan with the work-stealing rule (every partition is busy): for each partition over its
 *       share {@code markReleasing}, then {@code release} at the epoch it holds (as when the batch
 *       in flight finishes at once); then {@code acquire} what it is short of.
 * </ol>
 *
 * The rule is a copy of boxline-core's {@code Rebalance.plan}, which is package-private there;
 * {@code RebalanceTest} in boxline-core checks the rule on its own, this class checks a store under
 * it. A round stands for one check-in interval. Live members write a deadline ({@link #ttl()}) well
 * beyond their next turn; members that {@link #kill crash} write a short one at their last
 * check-in, so that the test does not wait long for it to pass.
 *
 * <p>Besides what the store says, the group keeps what each member believes it holds, and records a
 * {@link #violations() violation} when a member wins a partition another live member believes it
 * holds, an epoch does not grow, a live member loses a lease, or a view shows a partition twice.
 * Every call to the store is counted ({@link #calls()}).
 */
public final class SimulatedGroup implements AutoCloseable {
  /** The backlog every partition has (all are busy). */
  private static final long BACKLOG = 5;

  private static final int MAX_VIOLATIONS = 50;

  private final CountingStore store;
  private final CoordinationStore raw;
  private final String group;
  private final List<PartitionKey> partitions;
  private final Map<PartitionKey, Long> backlogged = new LinkedHashMap<>();
  private final List<Sim> members = new ArrayList<>();
  private final Set<String> dead = ConcurrentHashMap.newKeySet();
  private final ExecutorService pool;

  /** The order members take their turns in, the same every round. */
  private final List<Sim> order = new ArrayList<>();

  private final MemberStatus status =
      new MemberStatus("sim-host", "4242@sim-host", List.<MemberStatus.Running>of());

  /** Who believes it holds each partition (a member stops believing before it releases). */
  private final ConcurrentHashMap<PartitionKey, String> believed = new ConcurrentHashMap<>();

  private final ConcurrentHashMap<PartitionKey, Long> highestEpoch = new ConcurrentHashMap<>();
  private final List<String> violations = new CopyOnWriteArrayList<>();
  private final AtomicInteger violationCount = new AtomicInteger();
  private final Duration minTtl;
  private volatile Duration ttl;
  private long slowestRoundNanos;
  private int rounds;

  /**
   * @param store the store under test (closed with this group)
   * @param group the group's name
   * @param members how many members, {@code m0000} …, of weight 1
   * @param partitions how many partitions (topic 1), all with a backlog
   * @param threads how many members take their turn at once
   * @param minTtl the shortest deadline live members write (they write four times the slowest round
   *     when that is longer); crashed members write theirs at {@link #kill}
   */
  public SimulatedGroup(
      CoordinationStore store,
      String group,
      int members,
      int partitions,
      int threads,
      Duration minTtl) {
    this.raw = store;
    this.store = new CountingStore(store);
    this.group = group;
    List<PartitionKey> ps = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      PartitionKey k = PartitionKey.of(1, p);
      ps.add(k);
      backlogged.put(k, BACKLOG);
    }
    this.partitions = List.copyOf(ps);
    for (int i = 0; i < members; i++) {
      this.members.add(new Sim(String.format("m%04d", i), 1, new Random(1000 + i)));
    }
    // Not by id; the same each round, so a member's turns are one round apart.
    order.addAll(this.members);
    Collections.shuffle(order, new Random(7));
    this.pool =
        Executors.newFixedThreadPool(
            threads,
            r -> {
              Thread t = new Thread(r, "simulated-group");
              t.setDaemon(true);
              return t;
            });
    this.minTtl = minTtl;
    this.ttl = minTtl;
  }

  /** What one round did. */
  public record Round(
      int number,
      int turns,
      int acquired,
      int contested,
      int marked,
      int released,
      int reclaimed,
      int lost,
      long nanos) {
    /** Whether any lease moved (taken, given back, reclaimed or lost). */
    public boolean moved() {
      return acquired + marked + released + reclaimed + lost > 0;
    }

    public double seconds() {
      return nanos / 1e9;
    }
  }

  /**
   * The group as the store shows it between rounds.
   *
   * @param live members the store counts live
   * @param liveDead of them, members this group stopped
   * @param leases held leases
   * @param unowned partitions without a lease held by a live member
   * @param duplicated partitions shown with more than one lease
   * @param releasing leases still RELEASING
   * @param epochMismatch leases whose epoch or owner is not what the owner believes it holds
   * @param fairMin the lower bound of an equal member's fair share among the live members
   * @param fairMax the upper bound
   * @param fewest the fewest leases a live member holds
   * @param most the most leases a live member holds
   * @param outsideBounds live members holding fewer than {@code fairMin} or more than {@code
   *     fairMax}
   */
  public record State(
      int live,
      int liveDead,
      int leases,
      int unowned,
      int duplicated,
      int releasing,
      int epochMismatch,
      int fairMin,
      int fairMax,
      int fewest,
      int most,
      int outsideBounds) {
    /** Every partition held once, by a live member, at the epoch it believes, within its share. */
    public boolean balanced() {
      return liveDead == 0
          && unowned == 0
          && duplicated == 0
          && releasing == 0
          && epochMismatch == 0
          && outsideBounds == 0;
    }

    /** Every partition held once by a live member (shares aside). */
    public boolean allOwned() {
      return liveDead == 0 && unowned == 0 && duplicated == 0;
    }
  }

  public String group() {
    return group;
  }

  /** The deadline members write now. */
  public Duration ttl() {
    return ttl;
  }

  /** The slowest round so far. */
  public Duration slowestRound() {
    return Duration.ofNanos(slowestRoundNanos);
  }

  /** Every member's id, in order. */
  public List<String> memberIds() {
    return members.stream().map(m -> m.id).toList();
  }

  /** Calls to the store so far, by method. */
  public Map<String, Long> calls() {
    return store.counts();
  }

  /** Time spent in calls to the store so far, by method, in nanoseconds (summed over threads). */
  public Map<String, Long> callNanos() {
    return store.nanos();
  }

  /** The first violations (at most 50) and how many there were in all. */
  public List<String> violations() {
    List<String> out = new ArrayList<>(violations);
    if (violationCount.get() > out.size()) {
      out.add("... " + violationCount.get() + " violations in all");
    }
    return out;
  }

  /**
   * These members crash: each checks in a last time, writing {@code deadline} (the view it gets is
   * not looked at), and takes no more turns. Their leases stay until the deadline has passed and a
   * live member reclaims them.
   */
  public void kill(Collection<String> ids, Duration deadline) {
    for (String id : ids) {
      store.checkIn(group, id, 1, deadline, status);
    }
    dead.addAll(ids);
  }

  /** Runs one round: every live member takes one turn, {@code threads} at a time. */
  public Round round() {
    List<Sim> turn = new ArrayList<>();
    for (Sim m : order) {
      if (!dead.contains(m.id)) {
        turn.add(m);
      }
    }
    Tally tally = new Tally();
    long started = System.nanoTime();
    List<Callable<Void>> tasks = new ArrayList<>();
    for (Sim m : turn) {
      tasks.add(
          () -> {
            turn(m, tally);
            return null;
          });
    }
    try {
      for (Future<Void> f : pool.invokeAll(tasks)) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted in round " + (rounds + 1), e);
    } catch (ExecutionException e) {
      throw new AssertionError(
          "a member's turn failed in round " + (rounds + 1) + ": " + e.getCause(), e.getCause());
    }
    long nanos = System.nanoTime() - started;
    rounds++;
    slowestRoundNanos = Math.max(slowestRoundNanos, nanos);
    // A member's turns are about a round apart: four of the slowest round keep it live with room
    // to spare (a slower round, another build on the machine), in whole seconds (etcd's unit).
    long ttlMillis = Math.max(minTtl.toMillis(), 4 * slowestRoundNanos / 1_000_000);
    ttl = Duration.ofSeconds((ttlMillis + 999) / 1000);
    return new Round(
        rounds,
        turn.size(),
        tally.acquired.intValue(),
        tally.contested.intValue(),
        tally.marked.intValue(),
        tally.released.intValue(),
        tally.reclaimed.intValue(),
        tally.lost.intValue(),
        nanos);
  }

  /** Reads the group with {@code view} (not counted) and compares it with the members' beliefs. */
  public State state() {
    GroupView v = raw.view(group);
    Set<String> live = new HashSet<>();
    double totalWeight = 0;
    int liveDead = 0;
    for (Member m : v.members()) {
      if (live.add(m.id())) {
        totalWeight += m.weight();
        if (dead.contains(m.id())) {
          liveDead++;
        }
      }
    }
    Map<PartitionKey, Integer> seen = new HashMap<>();
    Map<String, Integer> held = new HashMap<>();
    int releasing = 0;
    int mismatch = 0;
    Map<String, Sim> byId = new HashMap<>();
    members.forEach(m -> byId.put(m.id, m));
    for (Lease l : v.leases()) {
      PartitionKey k = PartitionKey.of(l.topicId(), l.partition());
      seen.merge(k, 1, Integer::sum);
      if (l.releasing()) {
        releasing++;
      }
      if (live.contains(l.owner())) {
        held.merge(l.owner(), 1, Integer::sum);
      }
      Sim owner = byId.get(l.owner());
      Long believedEpoch = owner == null ? null : owner.held.get(k);
      if (!dead.contains(l.owner()) && (believedEpoch == null || believedEpoch != l.epoch())) {
        mismatch++;
      }
    }
    int unowned = 0;
    int duplicated = 0;
    for (PartitionKey k : partitions) {
      int n = seen.getOrDefault(k, 0);
      duplicated += n > 1 ? 1 : 0;
    }
    for (Lease l : v.leases()) {
      if (!live.contains(l.owner())) {
        unowned++; // held by a member the store no longer counts live
      }
    }
    for (PartitionKey k : partitions) {
      if (!seen.containsKey(k)) {
        unowned++;
      }
    }
    double slack = GroupPolicy.DEFAULT.slack();
    double share = live.isEmpty() ? 0 : partitions.size() / totalWeight; // weight 1 each
    int fairMin = (int) Math.floor(share * (1 - slack) + 1e-9);
    int fairMax = (int) Math.ceil(share * (1 + slack) - 1e-9);
    int fewest = Integer.MAX_VALUE;
    int most = 0;
    int outside = 0;
    for (String id : live) {
      int n = held.getOrDefault(id, 0);
      fewest = Math.min(fewest, n);
      most = Math.max(most, n);
      if (n < fairMin || n > fairMax) {
        outside++;
      }
    }
    return new State(
        live.size(),
        liveDead,
        v.leases().size(),
        unowned,
        duplicated,
        releasing,
        mismatch,
        fairMin,
        fairMax,
        live.isEmpty() ? 0 : fewest,
        most,
        outside);
  }

  /** Stops the threads and closes the store. */
  @Override
  public void close() {
    pool.shutdownNow();
    try {
      pool.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    raw.close();
  }

  // ---------------------------------------------------------------------------------------------

  /** One member: touched by one thread at a time (one turn per round, rounds one after another). */
  private static final class Sim {
    final String id;
    final double weight;
    final Random random;

    /** Leases it holds and delivers from, with their epochs. */
    final Map<PartitionKey, Long> held = new ConcurrentHashMap<>();

    long checkIns;
    boolean storeStampsPolicies;
    long policyStamp = GroupView.NO_POLICY_STAMP;
    GroupPolicy policy = GroupPolicy.DEFAULT;

    Sim(String id, double weight, Random random) {
      this.id = id;
      this.weight = weight;
      this.random = random;
    }
  }

  private static final class Tally {
    final LongAdder acquired = new LongAdder();
    final LongAdder contested = new LongAdder();
    final LongAdder marked = new LongAdder();
    final LongAdder released = new LongAdder();
    final LongAdder reclaimed = new LongAdder();
    final LongAdder lost = new LongAdder();
  }

  private void violation(String what) {
    if (violationCount.incrementAndGet() <= MAX_VIOLATIONS) {
      violations.add("round " + (rounds + 1) + ": " + what);
    }
  }

  private void turn(Sim m, Tally t) {
    // 1. Check in; the policy when its stamp changed (or every tenth check-in without stamps).
    boolean full = m.checkIns++ % 10 == 0;
    if (!m.storeStampsPolicies && full) {
      m.policy = store.policy(group);
    }
    GroupView view = store.checkIn(group, m.id, m.weight, ttl, status);
    if (view.policyStamp() != GroupView.NO_POLICY_STAMP) {
      m.storeStampsPolicies = true;
      if (view.policyStamp() != m.policyStamp) {
        m.policy = store.policy(group);
        m.policyStamp = view.policyStamp();
      }
    }
    GroupPolicy pol = m.policy;
    List<Member> seen = new ArrayList<>(view.members());
    Set<String> live = new HashSet<>();
    seen.forEach(x -> live.add(x.id()));
    if (live.add(m.id)) {
      seen.add(new Member(m.id, m.weight)); // a store may read the view before the heartbeat
    }
    Map<PartitionKey, Lease> byKey = new HashMap<>();
    for (Lease l : view.leases()) {
      PartitionKey k = PartitionKey.of(l.topicId(), l.partition());
      if (byKey.put(k, l) != null) {
        violation(m.id + "'s view shows " + k + " twice");
      }
    }

    // 2. Leases it holds that the store gave to someone else (it was considered dead).
    for (Iterator<Map.Entry<PartitionKey, Long>> it = m.held.entrySet().iterator();
        it.hasNext(); ) {
      Map.Entry<PartitionKey, Long> e = it.next();
      Lease l = byKey.get(e.getKey());
      if (l == null || !l.owner().equals(m.id) || l.epoch() != e.getValue()) {
        it.remove();
        believed.remove(e.getKey(), m.id);
        t.lost.increment();
        violation(
            m.id
                + " lost "
                + e.getKey()
                + " (epoch "
                + e.getValue()
                + "), now "
                + (l == null ? "free" : l.owner() + " at " + l.epoch()));
      }
    }
    // Leases under its id it does not hold (a lease it was told it did not win).
    for (Lease l : view.leases()) {
      PartitionKey k = PartitionKey.of(l.topicId(), l.partition());
      if (l.owner().equals(m.id) && !m.held.containsKey(k)) {
        violation(m.id + " holds " + k + " in the store but did not win it");
        store.release(group, k, m.id, l.epoch());
        byKey.remove(k);
      }
    }

    // 3. Leases of dead members and RELEASING leases stuck past the grace.
    boolean stale = false;
    for (Lease l : byKey.values()) {
      if (!live.contains(l.owner())
          || (l.releasing() && l.since().plus(pol.releaseGrace()).isBefore(view.now()))) {
        stale = true;
        break;
      }
    }
    if (stale) {
      t.reclaimed.add(store.reclaim(group, live, pol.releaseGrace()));
      byKey.values().removeIf(l -> !live.contains(l.owner()));
    }

    // 4. Toward its fair share: give back the excess, take what it is short of.
    Map<PartitionKey, Long> mine = new HashMap<>();
    m.held.keySet().forEach(k -> mine.put(k, BACKLOG));
    Plan plan = plan(m.id, m.weight, seen, byKey.values(), backlogged, mine, pol.slack(), m.random);
    for (PartitionKey k : plan.release()) {
      // Its batch in flight finishes, then the lease goes back (a member whose workers are idle
      // releases at once; a RELEASING lease shows others that it is about to be free).
      long epoch = m.held.remove(k);
      if (store.markReleasing(group, k, m.id, epoch)) {
        t.marked.increment();
      } else {
        t.lost.increment();
        violation(m.id + " could not mark " + k + " RELEASING at " + epoch);
      }
      believed.remove(k, m.id);
      if (store.release(group, k, m.id, epoch)) {
        t.released.increment();
      } else {
        t.lost.increment();
        violation(m.id + " could not release " + k + " RELEASING at " + epoch);
      }
    }
    if (!plan.acquire().isEmpty()) {
      List<OptionalLong> got = store.acquire(group, plan.acquire(), m.id);
      for (int i = 0; i < got.size(); i++) {
        PartitionKey k = plan.acquire().get(i);
        if (got.get(i).isEmpty()) {
          t.contested.increment();
          continue;
        }
        long epoch = got.get(i).getAsLong();
        String before = believed.put(k, m.id);
        if (before != null && !dead.contains(before)) {
          violation(m.id + " won " + k + " at " + epoch + " which live " + before + " holds");
        }
        highestEpoch.compute(
            k,
            (key, prev) -> {
              if (prev != null && epoch <= prev) {
                violation(m.id + " won " + k + " at epoch " + epoch + ", not above " + prev);
              }
              return prev == null ? epoch : Math.max(prev, epoch);
            });
        m.held.put(k, epoch);
        t.acquired.increment();
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // A copy of boxline-core's Rebalance.plan (package-private there); keep the two alike.

  private record Plan(List<PartitionKey> release, List<PartitionKey> acquire) {}

  private static Plan plan(
      String me,
      double myWeight,
      List<Member> members,
      Collection<Lease> leases,
      Map<PartitionKey, Long> backlogged,
      Map<PartitionKey, Long> mine,
      double slack,
      Random random) {
    Set<String> live = new HashSet<>();
    double totalWeight = 0;
    for (Member m : members) {
      live.add(m.id());
      totalWeight += m.weight();
    }
    if (!live.contains(me)) {
      live.add(me);
      totalWeight += myWeight;
    }
    Set<PartitionKey> leased = new HashSet<>();
    for (Lease l : leases) {
      if (live.contains(l.owner())) {
        leased.add(PartitionKey.of(l.topicId(), l.partition()));
      }
    }
    Set<PartitionKey> active = new LinkedHashSet<>(backlogged.keySet());
    active.addAll(leased);
    active.addAll(mine.keySet());
    double share = active.isEmpty() ? 0 : myWeight / totalWeight * active.size();
    int max = (int) Math.ceil(share * (1 + slack) - 1e-9);
    int excess = Math.max(0, mine.size() - max);
    boolean starving = someoneStarving(me, members, leases, active.size(), totalWeight, slack);
    int floorShare = (int) Math.floor(share + 1e-9);
    if (starving && mine.size() - excess > floorShare) {
      excess++;
    }
    List<PartitionKey> release = new ArrayList<>();
    List<PartitionKey> acquire = new ArrayList<>();
    if (excess > 0) {
      List<Map.Entry<PartitionKey, Long>> byBacklog = new ArrayList<>(mine.entrySet());
      byBacklog.sort(Map.Entry.comparingByValue(Comparator.naturalOrder()));
      for (int i = 0; i < excess; i++) {
        release.add(byBacklog.get(i).getKey());
      }
    } else {
      int target = starving ? Math.min(max, floorShare) : max;
      List<PartitionKey> free = new ArrayList<>();
      if (mine.size() < target) {
        for (PartitionKey p : active) {
          if (!leased.contains(p) && !mine.containsKey(p)) {
            free.add(p);
          }
        }
      }
      if (!free.isEmpty()) {
        free.sort(
            Comparator.comparingLong(PartitionKey::topicId)
                .thenComparingInt(PartitionKey::partition));
        int pivot = random.nextInt(free.size());
        for (int i = 0; i < free.size() && acquire.size() < target - mine.size(); i++) {
          acquire.add(free.get((pivot + i) % free.size()));
        }
      }
    }
    return new Plan(release, acquire);
  }

  private static boolean someoneStarving(
      String me,
      List<Member> members,
      Collection<Lease> leases,
      int active,
      double totalWeight,
      double slack) {
    Map<String, Integer> held = new HashMap<>();
    for (Lease l : leases) {
      if (!l.releasing()) {
        held.merge(l.owner(), 1, Integer::sum);
      }
    }
    for (Member m : members) {
      if (m.id().equals(me)) {
        continue;
      }
      int min = (int) Math.floor(m.weight() / totalWeight * active * (1 - slack) + 1e-9);
      if (held.getOrDefault(m.id(), 0) < min) {
        return true;
      }
    }
    return false;
  }

  // ---------------------------------------------------------------------------------------------

  /** Counts every call and the time spent in it. */
  private static final class CountingStore implements CoordinationStore {
    private final CoordinationStore d;
    private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> nanos = new ConcurrentHashMap<>();

    CountingStore(CoordinationStore d) {
      this.d = d;
    }

    Map<String, Long> counts() {
      Map<String, Long> out = new TreeMap<>();
      counts.forEach((k, v) -> out.put(k, v.sum()));
      return out;
    }

    Map<String, Long> nanos() {
      Map<String, Long> out = new TreeMap<>();
      nanos.forEach((k, v) -> out.put(k, v.sum()));
      return out;
    }

    private <T> T timed(String what, java.util.function.Supplier<T> call) {
      long started = System.nanoTime();
      try {
        return call.get();
      } finally {
        counts.computeIfAbsent(what, k -> new LongAdder()).increment();
        nanos.computeIfAbsent(what, k -> new LongAdder()).add(System.nanoTime() - started);
      }
    }

    @Override
    public String describe() {
      return d.describe();
    }

    @Override
    public GroupView checkIn(
        String group, String member, double weight, Duration ttl, MemberStatus status) {
      return timed("checkIn", () -> d.checkIn(group, member, weight, ttl, status));
    }

    @Override
    public GroupView view(String group) {
      return timed("view", () -> d.view(group));
    }

    @Override
    public void leave(String group, String member) {
      timed(
          "leave",
          () -> {
            d.leave(group, member);
            return null;
          });
    }

    @Override
    public int renew(String group, Collection<String> members, Duration ttl) {
      return timed("renew", () -> d.renew(group, members, ttl));
    }

    @Override
    public List<OptionalLong> acquire(String group, List<PartitionKey> ps, String member) {
      return timed("acquire", () -> d.acquire(group, ps, member));
    }

    @Override
    public boolean markReleasing(String group, PartitionKey p, String member, long epoch) {
      return timed("markReleasing", () -> d.markReleasing(group, p, member, epoch));
    }

    @Override
    public boolean release(String group, PartitionKey p, String member, long epoch) {
      return timed("release", () -> d.release(group, p, member, epoch));
    }

    @Override
    public int reclaim(String group, Set<String> liveMembers, Duration grace) {
      return timed("reclaim", () -> d.reclaim(group, liveMembers, grace));
    }

    @Override
    public GroupPolicy policy(String group) {
      return timed("policy", () -> d.policy(group));
    }

    @Override
    public void setPolicy(Optional<String> group, Optional<GroupPolicy> policy) {
      d.setPolicy(group, policy);
    }

    @Override
    public List<String> liveMembers(String group) {
      return timed("liveMembers", () -> d.liveMembers(group));
    }

    @Override
    public int forceRelease(String group, Collection<PartitionKey> ps) {
      return timed("forceRelease", () -> d.forceRelease(group, ps));
    }

    @Override
    public void close() {
      d.close();
    }
  }
}
