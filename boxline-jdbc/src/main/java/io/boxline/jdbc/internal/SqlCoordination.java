package io.boxline.jdbc.internal;

import io.boxline.GroupPolicy;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.MemberStatus;
import io.boxline.spi.PartitionKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Consumer-group coordination in the database that holds the log (the default), on every dialect.
 * Times come from the database clock, so members on hosts with skewed clocks agree. Every lease
 * statement locks rows in key order; a deadlock or lock timeout the server reports anyway is
 * retried a few times.
 *
 * <p>A check-in runs in as few round trips as the dialect allows: one statement on PostgreSQL
 * (data-modifying CTE), one stored-procedure call on MariaDB / MySQL, two statements on H2. How
 * leases are taken (one compare-and-set statement, or lock-then-take) and how lists travel come
 * from the {@link SqlDialect}.
 */
final class SqlCoordination implements CoordinationStore {
  private static final int ATTEMPTS = 4;

  private final JdbcSql db;
  private final SqlDialect dialect;
  private final String description;

  /**
   * Check-ins run on a held connection: from the pool, a connection idle since the last check-in
   * gets a validation ping first (see {@link IdleConnection}).
   */
  private final IdleConnection idle;

  private final boolean ownsIdle;

  /** The check-in's statement: a procedure call, two statements, or one (see the class comment). */
  private final String checkInStatement;

  /**
   * @param idle the held check-in connection, shared with the store; null to hold one of its own
   */
  SqlCoordination(JdbcSql db, SqlDialect dialect, String database, IdleConnection idle) {
    this.db = db;
    this.dialect = dialect;
    this.description = "database coordination (" + database + ")";
    this.ownsIdle = idle == null;
    this.idle = idle == null ? new IdleConnection(db.dataSource()) : idle;
    this.checkInStatement =
        db.has("check_in_call") ? "check_in_call" : db.has("heartbeat") ? "heartbeat" : "check_in";
  }

  @Override
  public String describe() {
    return description;
  }

  /** Runs {@code work} on a pooled auto-commit connection, retrying after deadlocks. */
  private <T> T run(String name, JdbcSql.Work<T> work) {
    for (int attempt = 1; ; attempt++) {
      try (Connection c = db.connect()) {
        return work.run(c);
      } catch (SQLException e) {
        if (attempt >= ATTEMPTS || !dialect.retryable(e)) {
          throw db.fail(name, e);
        }
      }
    }
  }

  @Override
  public GroupView checkIn(
      String group, String member, double weight, Duration ttl, MemberStatus status) {
    String name = checkInStatement;
    String reported = status.encode();
    for (int attempt = 1; ; attempt++) {
      try (Connection c = idle.borrow()) {
        switch (name) {
          case "check_in_call":
            return checkInByCall(c, group, member, weight, ttl, reported);
          case "heartbeat":
            return checkInInTwo(c, group, member, weight, ttl, reported);
          default:
            return checkInInOne(c, group, member, weight, ttl, reported);
        }
      } catch (SQLException e) {
        if (attempt >= ATTEMPTS || !dialect.retryable(e)) {
          throw db.fail(name, e);
        }
      }
    }
  }

  /** One statement writes the heartbeat and reads the group (PostgreSQL). */
  private GroupView checkInInOne(
      Connection c, String group, String member, double weight, Duration ttl, String status)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("check_in"))) {
      bindHeartbeat(ps, group, member, weight, ttl, status);
      ps.setString(6, group);
      ps.setString(7, group);
      ps.setString(8, group);
      try (ResultSet rs = ps.executeQuery()) {
        return readView(rs);
      }
    }
  }

  /** One procedure call reads the group and writes the heartbeat (MariaDB / MySQL). */
  private GroupView checkInByCall(
      Connection c, String group, String member, double weight, Duration ttl, String status)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("check_in_call"))) {
      bindHeartbeat(ps, group, member, weight, ttl, status);
      ps.execute();
      GroupView view;
      try (ResultSet rs = ps.getResultSet()) {
        view = readView(rs);
      }
      while (ps.getMoreResults() || ps.getUpdateCount() != -1) {
        // drain the call's closing status, or the connection is not ready for the next use
      }
      return view;
    }
  }

  /**
   * The view first, then the heartbeat (H2): as with the one-statement check-in, the view may not
   * show this heartbeat yet (the engine adds the member itself).
   */
  private GroupView checkInInTwo(
      Connection c, String group, String member, double weight, Duration ttl, String status)
      throws SQLException {
    GroupView view;
    try (PreparedStatement ps = c.prepareStatement(db.sql("check_in"))) {
      ps.setString(1, group);
      ps.setString(2, group);
      ps.setString(3, group);
      try (ResultSet rs = ps.executeQuery()) {
        view = readView(rs);
      }
    }
    try (PreparedStatement ps = c.prepareStatement(db.sql("heartbeat"))) {
      bindHeartbeat(ps, group, member, weight, ttl, status);
      ps.executeUpdate();
    }
    return view;
  }

  /** Binds a member's heartbeat (group, member, weight, time to live, status) at parameters 1-5. */
  private void bindHeartbeat(
      PreparedStatement ps, String group, String member, double weight, Duration ttl, String status)
      throws SQLException {
    ps.setString(1, group);
    ps.setString(2, member);
    ps.setDouble(3, weight);
    dialect.bindDuration(ps, 4, ttl);
    ps.setString(5, status);
  }

  /**
   * The rows of a check-in query, in every dialect: kind {@code m} (member: id, weight), {@code l}
   * (lease: owner, topic, partition, epoch, releasing, since) or {@code p} (the policy stamp), each
   * with the database's time in column 9.
   */
  private GroupView readView(ResultSet rs) throws SQLException {
    return readView(rs, false);
  }

  /**
   * @param times whether member rows carry their last check-in (column 8), deadline (column 10) and
   *     reported status (column 11), as {@code group_view}'s do
   */
  private GroupView readView(ResultSet rs, boolean times) throws SQLException {
    List<Member> members = new ArrayList<>();
    List<Lease> leases = new ArrayList<>();
    Instant now = null;
    long policyStamp = GroupView.NO_POLICY_STAMP;
    while (rs.next()) {
      now = dialect.instant(rs, 9);
      String kind = rs.getString(1);
      if ("m".equals(kind)) {
        members.add(
            times
                ? new Member(
                    rs.getString(2),
                    rs.getDouble(3),
                    dialect.instant(rs, 8),
                    dialect.instant(rs, 10),
                    MemberStatus.decode(rs.getString(11)))
                : new Member(rs.getString(2), rs.getDouble(3)));
      } else if ("p".equals(kind)) {
        policyStamp = rs.getLong(4);
      } else {
        leases.add(
            new Lease(
                rs.getLong(4),
                rs.getInt(5),
                rs.getString(2),
                rs.getLong(6),
                rs.getBoolean(7),
                dialect.instant(rs, 8)));
      }
    }
    return new GroupView(members, leases, now == null ? Instant.now() : now, policyStamp);
  }

  @Override
  public GroupView view(String group) {
    return run(
        "group_view",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(db.sql("group_view"))) {
            ps.setString(1, group);
            ps.setString(2, group);
            try (ResultSet rs = ps.executeQuery()) {
              return readView(rs, true);
            }
          }
        });
  }

  @Override
  public void leave(String group, String member) {
    run(
        "leave_group",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(db.sql("leave_member"))) {
            ps.setString(1, group);
            ps.setString(2, member);
            ps.executeUpdate();
          }
          try (PreparedStatement ps = c.prepareStatement(db.sql("leave_leases"))) {
            ps.setString(1, group);
            ps.setString(2, member);
            return ps.executeUpdate();
          }
        });
  }

  @Override
  public List<java.util.OptionalLong> acquire(
      String group, List<PartitionKey> partitions, String member) {
    if (partitions.isEmpty()) {
      return List.of();
    }
    // A fixed lock order keeps two members that reach for overlapping sets from deadlocking.
    List<PartitionKey> sorted = JdbcSql.sorted(new LinkedHashSet<>(partitions));
    return JdbcSql.inOrder(
        partitions, run("acquire_leases", c -> dialect.takeLeases(c, db, group, member, sorted)));
  }

  private boolean leaseUpdate(
      String name, String group, PartitionKey p, String member, long epoch) {
    return run(
            name,
            c -> {
              try (PreparedStatement ps = c.prepareStatement(db.sql(name))) {
                ps.setString(1, group);
                ps.setLong(2, p.topicId());
                ps.setInt(3, p.partition());
                ps.setString(4, member);
                ps.setLong(5, epoch);
                return ps.executeUpdate();
              }
            })
        == 1;
  }

  @Override
  public boolean markReleasing(String group, PartitionKey partition, String member, long epoch) {
    return leaseUpdate("mark_releasing", group, partition, member, epoch);
  }

  @Override
  public boolean release(String group, PartitionKey partition, String member, long epoch) {
    return leaseUpdate("release_lease", group, partition, member, epoch);
  }

  /** Members gone for over an hour are forgotten on the way. */
  @Override
  public int reclaim(String group, Set<String> liveMembers, Duration grace) {
    return run(
        "reclaim_leases",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(db.sql("forget_members"))) {
            ps.setString(1, group);
            ps.executeUpdate();
          }
          try (PreparedStatement ps = c.prepareStatement(db.sql("reclaim_leases"))) {
            ps.setString(1, group);
            dialect.bindMembers(ps, 2, c, liveMembers);
            dialect.bindDuration(ps, 3, grace);
            return ps.executeUpdate();
          }
        });
  }

  @Override
  public int renew(String group, Collection<String> members, Duration ttl) {
    if (members.isEmpty()) {
      return 0;
    }
    Set<String> ids = new LinkedHashSet<>(members);
    return run(
        "renew_members",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(db.sql("renew_members"))) {
            dialect.bindDuration(ps, 1, ttl);
            ps.setString(2, group);
            dialect.bindMembers(ps, 3, c, ids);
            return ps.executeUpdate();
          }
        });
  }

  @Override
  public List<String> liveMembers(String group) {
    return db.list("live_members", ps -> ps.setString(1, group), rs -> rs.getString(1));
  }

  @Override
  public int forceRelease(String group, Collection<PartitionKey> partitions) {
    if (partitions.isEmpty()) {
      return 0;
    }
    List<PartitionKey> sorted = JdbcSql.sorted(new LinkedHashSet<>(partitions));
    return run("force_release", c -> dialect.forceRelease(c, db, group, sorted));
  }

  @Override
  public GroupPolicy policy(String group) {
    return db.one(
            "group_policy",
            ps -> ps.setString(1, group),
            rs ->
                new GroupPolicy(
                    rs.getDouble(1),
                    Duration.ofMillis(rs.getLong(2)),
                    rs.getDouble(3),
                    rs.getDouble(4),
                    Duration.ofMillis(rs.getLong(5)),
                    Duration.ofMillis(rs.getLong(6)),
                    rs.getInt(7),
                    maxCheckIn(rs.getLong(8), rs.wasNull(), Duration.ofMillis(rs.getLong(2))),
                    rs.getInt(9)))
        .orElse(GroupPolicy.DEFAULT);
  }

  /** A policy stored before the cap existed has none: the default cap, never below the minimum. */
  private static Duration maxCheckIn(long millis, boolean absent, Duration min) {
    if (!absent) {
      return Duration.ofMillis(millis);
    }
    Duration cap = GroupPolicy.DEFAULT.maxCheckInInterval();
    return cap.compareTo(min) >= 0 ? cap : min;
  }

  @Override
  public void setPolicy(Optional<String> group, Optional<GroupPolicy> policy) {
    String name = group.orElse("");
    String query = policy.isPresent() ? "upsert_group_policy" : "delete_group_policy";
    db.update(
        query,
        ps -> {
          ps.setString(1, name);
          if (policy.isPresent()) {
            GroupPolicy p = policy.get();
            ps.setDouble(2, p.checkInRate());
            ps.setLong(3, p.minCheckInInterval().toMillis());
            ps.setDouble(4, p.deadlineMultiplier());
            ps.setDouble(5, p.slack());
            ps.setLong(6, p.releaseGrace().toMillis());
            ps.setLong(7, p.idleRelease().toMillis());
            ps.setInt(8, p.batchSize());
            ps.setLong(9, p.maxCheckInInterval().toMillis());
            ps.setInt(10, p.maxMembers());
          }
        });
  }

  /** Gives the held check-in connection back to the pool, if it is this store's own. */
  @Override
  public void close() {
    if (ownsIdle) {
      idle.close();
    }
  }
}
