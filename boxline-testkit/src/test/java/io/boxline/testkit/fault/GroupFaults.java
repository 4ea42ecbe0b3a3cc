package io.boxline.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.GroupPolicy;
import io.boxline.testkit.fault.FaultFixture.Part;
import io.boxline.testkit.process.ChildJvm;
import io.boxline.testkit.process.GroupMemberProcess;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Shared world of the consumer-group fault tests: a {@link FaultFixture} (schema, child JVMs), the
 * {@code handled} table the {@link GroupMemberProcess} children write to, plain-JDBC views of the
 * group's {@code lease}, {@code member} and {@code cursor} rows, and the delivery checks.
 */
final class GroupFaults implements AutoCloseable {
  /**
   * The fast policy of these tests: check-ins every max(200 ms, members / 8 per s), a member dead
   * after 5 missed intervals, RELEASING leases reclaimable after 2 s.
   */
  static final GroupPolicy POLICY =
      GroupPolicy.DEFAULT
          .withMinCheckInInterval(Duration.ofMillis(200))
          .withDeadlineMultiplier(5)
          .withReleaseGrace(Duration.ofSeconds(2));

  /**
   * Allowance on top of the computed takeover bound for a loaded 2-core machine (several JVMs and
   * the database competing for CPU, statement latency, JIT and GC pauses).
   */
  static final Duration LOADED_MACHINE_SLACK = Duration.ofMillis(1500);

  /** Check-in jitter of the engine: each interval is drawn from [0.9, 1.1] × the interval. */
  static final double JITTER = 1.1;

  /** One row of the {@code lease} table. */
  /** One row of the {@code lease} table; {@code since} is when it was taken or marked RELEASING. */
  record LeaseRow(Part part, String owner, long epoch, boolean releasing, Instant since) {}

  /** One row of the {@code cursor} table. */
  record CursorRow(Part part, long position, long epoch, String owner) {}

  /**
   * One handler call as recorded by a member, with the event's position checked against the log.
   */
  record Delivery(long n, UUID eventId, Part part, long seq, String member, int run) {
    String incarnation() {
      return member + "/run" + run;
    }
  }

  private final FaultFixture fx;

  private GroupFaults(FaultFixture fx) {
    this.fx = fx;
  }

  static GroupFaults create(String hint) {
    return new GroupFaults(FaultFixture.create(hint));
  }

  FaultFixture fx() {
    return fx;
  }

  String table(String name) {
    return fx.table(name);
  }

  /** Upper bound of time since {@code nanoTime} in milliseconds. */
  static long millisSince(long nanoTime) {
    return (System.nanoTime() - nanoTime) / 1_000_000;
  }

  /** {@code factor} × {@code d} in milliseconds, rounded up. */
  static long times(Duration d, double factor) {
    return (long) Math.ceil(d.toMillis() * factor);
  }

  // ------------------------------------------------------------------ children
  /** Child name of a member incarnation (also its log-file and session name). */
  static String childName(String member, int run) {
    return member + "-run" + run;
  }

  /**
   * Creates the table the members record each delivery in, one auto-commit row per handler call.
   */
  void createHandledTable() {
    fx.execute(
        "CREATE TABLE "
            + table("handled")
            + " (n bigserial PRIMARY KEY, event_id uuid NOT NULL, topic text NOT NULL,"
            + " partition int NOT NULL, seq bigint NOT NULL, member text NOT NULL, run int NOT"
            + " NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())");
  }

  /** Starts a {@link GroupMemberProcess} (without waiting for it to print READY). */
  ChildJvm startMember(
      String member,
      int run,
      String subscription,
      int batch,
      int concurrency,
      String... extraArgs) {
    List<String> args = new ArrayList<>();
    args.add("--id=" + member);
    args.add("--run=" + run);
    args.add("--subscription=" + subscription);
    args.add("--batch=" + batch);
    args.add("--concurrency=" + concurrency);
    args.addAll(Arrays.asList(extraArgs));
    return fx.startChild(
        childName(member, run), GroupMemberProcess.class, args.toArray(String[]::new));
  }

  // ------------------------------------------------------------------ group state
  /** Every lease row of the group, by partition. */
  Map<Part, LeaseRow> leases(String group) {
    Map<Part, LeaseRow> out = new TreeMap<>();
    String sql =
        "SELECT topic_id, partition, owner, epoch, releasing, since FROM "
            + table("lease")
            + " WHERE group_name = ?";
    try (Connection c = fx.db().dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, group);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Part p = new Part(rs.getLong(1), rs.getInt(2));
          out.put(
              p,
              new LeaseRow(
                  p,
                  rs.getString(3),
                  rs.getLong(4),
                  rs.getBoolean(5),
                  rs.getTimestamp(6).toInstant()));
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
    return out;
  }

  /** When the member's row says it counts as dead (database clock), if it has a row. */
  Optional<Instant> memberExpiry(String group, String member) {
    String sql =
        "SELECT expires_at FROM " + table("member") + " WHERE group_name = ? AND member_id = ?";
    try (Connection c = fx.db().dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, group);
      ps.setString(2, member);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(rs.getTimestamp(1).toInstant()) : Optional.empty();
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
  }

  /** Active (not RELEASING) leases per owner. */
  Map<String, Integer> activeLeaseCounts(String group) {
    Map<String, Integer> out = new TreeMap<>();
    for (LeaseRow l : leases(group).values()) {
      if (l.owner() != null && !l.releasing()) {
        out.merge(l.owner(), 1, Integer::sum);
      }
    }
    return out;
  }

  /** Partitions whose lease the member holds. */
  Set<Part> heldBy(String group, String member) {
    Set<Part> out = new HashSet<>();
    for (LeaseRow l : leases(group).values()) {
      if (member.equals(l.owner())) {
        out.add(l.part());
      }
    }
    return out;
  }

  /** Every cursor row of the subscription, by partition. */
  Map<Part, CursorRow> cursorRows(String subscription) {
    Map<Part, CursorRow> out = new TreeMap<>();
    String sql =
        "SELECT c.topic_id, c.partition, c.position, c.epoch, c.owner FROM "
            + table("cursor")
            + " c JOIN "
            + table("subscription")
            + " s ON s.id = c.subscription_id WHERE s.name = ?";
    try (Connection c = fx.db().dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, subscription);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Part p = new Part(rs.getLong(1), rs.getInt(2));
          out.put(p, new CursorRow(p, rs.getLong(3), rs.getLong(4), rs.getString(5)));
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
    return out;
  }

  /** Members whose heartbeat has not expired, by the database clock. */
  Set<String> liveMembers(String group) {
    Set<String> out = new HashSet<>();
    String sql =
        "SELECT member_id FROM " + table("member") + " WHERE group_name = ? AND expires_at > now()";
    try (Connection c = fx.db().dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, group);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
    return out;
  }

  /** A member's last heartbeat, microseconds since the epoch by the database clock; -1 if none. */
  long heartbeatMicros(String group, String member) {
    return fx.count(
        "SELECT coalesce(max((extract(epoch FROM heartbeat_at) * 1000000)::bigint), -1) FROM "
            + table("member")
            + " WHERE group_name = ? AND member_id = ?",
        group,
        member);
  }

  /**
   * When a member's heartbeat expires, microseconds since the epoch (database clock); -1 if none.
   */
  long expiresMicros(String group, String member) {
    return fx.count(
        "SELECT coalesce(max((extract(epoch FROM expires_at) * 1000000)::bigint), -1) FROM "
            + table("member")
            + " WHERE group_name = ? AND member_id = ?",
        group,
        member);
  }

  long handledCount(String member, int run) {
    return fx.count(
        "SELECT count(*) FROM " + table("handled") + " WHERE member = ? AND run = ?", member, run);
  }

  long distinctHandled() {
    return fx.distinctHandled();
  }

  // ------------------------------------------------------------------ deliveries
  /**
   * Every recorded handler call in recording order; fails when a delivery's (partition, seq) is not
   * the event's position in the log.
   */
  List<Delivery> deliveries() {
    List<Delivery> out = new ArrayList<>();
    String sql =
        "SELECT h.n, h.event_id, h.partition, h.seq, h.member, h.run, l.topic_id, l.partition,"
            + " l.seq FROM "
            + table("handled")
            + " h LEFT JOIN "
            + table("log")
            + " l ON l.event_id = h.event_id ORDER BY h.n";
    try (Connection c = fx.db().dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        UUID id = rs.getObject(2, UUID.class);
        long topicId = rs.getLong(7);
        assertThat(rs.wasNull()).as("log entry of handled event %s", id).isFalse();
        assertThat(rs.getInt(3) + "@" + rs.getLong(4))
            .as("position of event %s as delivered vs logged", id)
            .isEqualTo(rs.getInt(8) + "@" + rs.getLong(9));
        out.add(
            new Delivery(
                rs.getLong(1),
                id,
                new Part(topicId, rs.getInt(3)),
                rs.getLong(4),
                rs.getString(5),
                rs.getInt(6)));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
    return out;
  }

  /**
   * The group's delivery contract, whatever moved partitions around: every published event handled,
   * nothing handled that was not published, and per member incarnation and partition the sequences
   * strictly increasing in handling order (each incarnation sees a partition's events in order and
   * never goes back).
   *
   * @return every event's deliveries, in handling order
   */
  Map<UUID, List<Delivery>> verifyDeliveries(Set<UUID> published) {
    List<Delivery> deliveries = deliveries();
    Map<UUID, List<Delivery>> byEvent = new LinkedHashMap<>();
    Map<String, Map<Part, Long>> lastSeq = new TreeMap<>();
    for (Delivery d : deliveries) {
      byEvent.computeIfAbsent(d.eventId(), k -> new ArrayList<>()).add(d);
      Long before =
          lastSeq.computeIfAbsent(d.incarnation(), k -> new HashMap<>()).put(d.part(), d.seq());
      if (before != null) {
        assertThat(d.seq())
            .as(
                "%s on %s: seq of delivery #%d after seq %d",
                d.incarnation(), d.part(), d.n(), before)
            .isGreaterThan(before);
      }
    }
    Set<UUID> missing = new HashSet<>(published);
    missing.removeAll(byEvent.keySet());
    Set<UUID> extra = new HashSet<>(byEvent.keySet());
    extra.removeAll(published);
    assertThat(missing).as("published events never handled (lost)").isEmpty();
    assertThat(extra).as("handled events that were never published").isEmpty();
    return byEvent;
  }

  /** Deliveries of the events handled more than once. */
  static List<List<Delivery>> duplicated(Map<UUID, List<Delivery>> byEvent) {
    List<List<Delivery>> out = new ArrayList<>();
    for (List<Delivery> ds : byEvent.values()) {
      if (ds.size() > 1) {
        out.add(ds);
      }
    }
    return out;
  }

  /** Number of extra deliveries (deliveries beyond the first of each event). */
  static int extraDeliveries(Map<UUID, List<Delivery>> byEvent) {
    int n = 0;
    for (List<Delivery> ds : byEvent.values()) {
      n += ds.size() - 1;
    }
    return n;
  }

  /**
   * Partitions a member incarnation reported as taken away without a graceful release (its
   * listener's {@code LOST [...]} lines), by partition number, with how many times.
   */
  static Map<Integer, Integer> lostPartitions(ChildJvm child) {
    Map<Integer, Integer> out = new TreeMap<>();
    Matcher lines = LOST_LINE.matcher(child.output());
    while (lines.find()) {
      Matcher parts = PARTITION.matcher(lines.group(1));
      while (parts.find()) {
        out.merge(Integer.parseInt(parts.group(1)), 1, Integer::sum);
      }
    }
    return out;
  }

  private static final Pattern LOST_LINE = Pattern.compile("\\] LOST \\[([^\\]]*)\\]");
  private static final Pattern PARTITION = Pattern.compile("#(\\d+)");

  /** What {@link #checkDuplicates} found. */
  record Duplicates(
      int byCrash,
      Map<Part, Integer> byCrashPerPart,
      int byLoss,
      Map<String, Map<Integer, Integer>> lost) {
    int total() {
      return byCrash + byLoss;
    }
  }

  /**
   * Every extra delivery of an event must be explained by a non-graceful handover: a delivery by an
   * incarnation that was killed while holding that partition ({@code crashedHolding}: incarnation →
   * partition numbers held at the kill), or by an incarnation that reported that partition LOST (a
   * member considered dead while alive, or whose batch outlived the release grace: its in-flight
   * batch goes to the next owner). A graceful release or stop never redelivers.
   *
   * <p>The handled table's order is not the handling order across processes (a handler may block
   * before its insert), so for an event delivered k times the k − 1 superseded deliveries are the
   * explained ones, and at most one delivery may be unexplained.
   *
   * <p>Bounds: one batch in flight per partition, so per incarnation and partition at most {@code
   * batch} per crash or loss, and a crash leaves at most {@code concurrency} partitions with
   * duplicates ({@code concurrency × batch} in all).
   */
  static Duplicates checkDuplicates(
      Map<UUID, List<Delivery>> byEvent,
      Map<String, ChildJvm> incarnations,
      Map<String, Set<Integer>> crashedHolding,
      int batch,
      int concurrency) {
    Map<String, Map<Integer, Integer>> lost = new TreeMap<>();
    incarnations.forEach((inc, child) -> lost.put(inc, lostPartitions(child)));
    Map<String, Integer> allowance = new TreeMap<>();
    lost.forEach(
        (inc, parts) -> parts.forEach((p, n) -> allowance.merge(inc + "@" + p, n, Integer::sum)));
    crashedHolding.forEach(
        (inc, parts) -> parts.forEach(p -> allowance.merge(inc + "@" + p, 1, Integer::sum)));
    Map<String, Integer> used = new TreeMap<>();
    Map<Part, Integer> byCrash = new TreeMap<>();
    int byLoss = 0;
    for (List<Delivery> ds : byEvent.values()) {
      if (ds.size() < 2) {
        continue;
      }
      List<Delivery> ordered = new ArrayList<>(ds);
      ordered.sort(
          java.util.Comparator.comparing(
              (Delivery d) ->
                  !allowance.containsKey(d.incarnation() + "@" + d.part().partition())));
      for (Delivery d : ordered.subList(0, ordered.size() - 1)) {
        String key = d.incarnation() + "@" + d.part().partition();
        assertThat(allowance)
            .as(
                "event delivered %d times: %s — only one delivery may come from an incarnation"
                    + " that neither crashed holding %s nor reported it LOST (a graceful handover"
                    + " must not redeliver)",
                ds.size(), ds, d.part())
            .containsKey(key);
        used.merge(key, 1, Integer::sum);
        if (crashedHolding.getOrDefault(d.incarnation(), Set.of()).contains(d.part().partition())) {
          byCrash.merge(d.part(), 1, Integer::sum);
        } else {
          byLoss++;
        }
      }
    }
    for (Map.Entry<String, Integer> e : used.entrySet()) {
      assertThat(e.getValue())
          .as(
              "superseded deliveries of %s (at most one in-flight batch per crash or loss)",
              e.getKey())
          .isLessThanOrEqualTo(batch * allowance.get(e.getKey()));
    }
    assertThat(byCrash.size())
        .as("partitions with duplicates from a crash (one in-flight batch per worker)")
        .isLessThanOrEqualTo(concurrency);
    int crashTotal = byCrash.values().stream().mapToInt(Integer::intValue).sum();
    assertThat(crashTotal).as("duplicates from the crash").isLessThanOrEqualTo(concurrency * batch);
    lost.values().removeIf(Map::isEmpty);
    return new Duplicates(crashTotal, byCrash, byLoss, lost);
  }

  @Override
  public void close() {
    fx.close();
  }
}
