package io.boxline.jdbc.internal;

import io.boxline.GroupPolicy;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.PartitionKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Consumer-group coordination in a database without data-modifying CTEs (MariaDB / MySQL, H2), in
 * the database that holds the log. Times come from the database clock (epoch microseconds). Every
 * lease statement locks rows in key order; a deadlock or lock timeout the server reports anyway is
 * retried a few times. Subclasses say how lists of leases travel to the database.
 */
abstract class SqlCoordination implements CoordinationStore {
  private static final int ATTEMPTS = 4;

  protected final JdbcSql db;
  private final String description;

  /**
   * Check-ins run on a held connection: from the pool, a connection idle since the last check-in
   * gets a validation ping first (see {@link IdleConnection}).
   */
  private final IdleConnection idle;

  SqlCoordination(JdbcSql db, String database) {
    this.db = db;
    this.description = "database coordination (" + database + ")";
    this.idle = new IdleConnection(db.dataSource());
  }

  /**
   * Whether the schema has a {@code check_in_call} procedure that reads the group and writes the
   * heartbeat in one statement (MariaDB/MySQL); otherwise they are two.
   */
  boolean checkInInOneCall() {
    return false;
  }

  /** Whether the failure is a deadlock or lock timeout worth another attempt. */
  abstract boolean retryable(SQLException e);

  /** Inserts the lease rows that do not exist yet (auto-commit), keys in order. */
  abstract void createLeases(Connection c, String group, List<PartitionKey> sorted)
      throws SQLException;

  /**
   * In the open transaction: locks the leases in key order, takes the free ones for {@code member}
   * and returns their new epochs.
   */
  abstract Map<PartitionKey, Long> lockAndTake(
      Connection c, String group, String member, List<PartitionKey> sorted) throws SQLException;

  /** Binds the live member ids of {@code reclaim_leases} at parameter {@code at}. */
  abstract void bindMembers(PreparedStatement ps, int at, Set<String> members) throws SQLException;

  /** Frees the given leases whoever holds them; returns how many. */
  abstract int forceRelease(Connection c, String group, List<PartitionKey> sorted)
      throws SQLException;

  @Override
  public String describe() {
    return description;
  }

  /** Runs {@code work} on a pooled auto-commit connection, retrying after deadlocks. */
  protected <T> T run(String name, JdbcSql.Work<T> work) {
    for (int attempt = 1; ; attempt++) {
      try (Connection c = db.connect()) {
        return work.run(c);
      } catch (SQLException e) {
        if (attempt >= ATTEMPTS || !retryable(e)) {
          throw db.fail(name, e);
        }
      }
    }
  }

  /** Runs {@code work} in a transaction, retrying after deadlocks. */
  protected <T> T tx(String name, JdbcSql.Work<T> work) {
    for (int attempt = 1; ; attempt++) {
      try {
        return db.tx(name, work);
      } catch (io.boxline.StoreException e) {
        if (attempt >= ATTEMPTS || !(e.getCause() instanceof SQLException s && retryable(s))) {
          throw e;
        }
      }
    }
  }

  @Override
  public GroupView checkIn(String group, String member, double weight, Duration ttl) {
    String name = checkInInOneCall() ? "check_in_call" : "check_in";
    for (int attempt = 1; ; attempt++) {
      try (Connection c = idle.borrow()) {
        // The view first, then the heartbeat: as with PostgreSQL's one-statement check-in, the
        // view may not show this heartbeat yet (the engine adds the member itself).
        if (checkInInOneCall()) {
          try (PreparedStatement ps = c.prepareStatement(db.sql("check_in_call"))) {
            ps.setString(1, group);
            ps.setString(2, member);
            ps.setDouble(3, weight);
            ps.setLong(4, MariaDbSql.micros(ttl));
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
          ps.setString(1, group);
          ps.setString(2, member);
          ps.setDouble(3, weight);
          ps.setLong(4, MariaDbSql.micros(ttl));
          ps.executeUpdate();
        }
        return view;
      } catch (SQLException e) {
        if (attempt >= ATTEMPTS || !retryable(e)) {
          throw db.fail(name, e);
        }
      }
    }
  }

  private static GroupView readView(ResultSet rs) throws SQLException {
    return readView(rs, (r, column) -> MariaDbSql.instant(r.getLong(column)));
  }

  /** How a dialect's check-in query returns a time (column 8 and 9). */
  interface TimeColumn {
    Instant read(ResultSet rs, int column) throws SQLException;
  }

  /**
   * The rows of a check-in query, in every dialect: kind {@code m} (member: id, weight), {@code l}
   * (lease: owner, topic, partition, epoch, releasing, since) or {@code p} (the policy stamp), each
   * with the database's time in column 9.
   */
  static GroupView readView(ResultSet rs, TimeColumn time) throws SQLException {
    List<Member> members = new ArrayList<>();
    List<Lease> leases = new ArrayList<>();
    Instant now = null;
    long policyStamp = GroupView.NO_POLICY_STAMP;
    while (rs.next()) {
      now = time.read(rs, 9);
      String kind = rs.getString(1);
      if ("m".equals(kind)) {
        members.add(new Member(rs.getString(2), rs.getDouble(3)));
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
                time.read(rs, 8)));
      }
    }
    return new GroupView(members, leases, now == null ? Instant.now() : now, policyStamp);
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
  public long[] acquire(String group, List<PartitionKey> partitions, String member) {
    long[] out = new long[partitions.size()];
    Arrays.fill(out, -1);
    if (partitions.isEmpty()) {
      return out;
    }
    List<PartitionKey> sorted = MariaDbSql.sorted(new java.util.LinkedHashSet<>(partitions));
    Map<PartitionKey, Integer> index = new HashMap<>();
    for (int i = 0; i < partitions.size(); i++) {
      index.put(partitions.get(i), i);
    }
    // Lease rows outlive their owners: create the missing ones first, on their own, so that the
    // transaction below only ever locks existing rows, exclusively, in key order.
    run(
        "create_leases",
        c -> {
          createLeases(c, group, sorted);
          return null;
        });
    return tx(
        "acquire_leases",
        c -> {
          long[] result = out.clone();
          lockAndTake(c, group, member, sorted)
              .forEach(
                  (k, epoch) -> {
                    Integer i = index.get(k);
                    if (i != null) {
                      result[i] = epoch;
                    }
                  });
          return result;
        });
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
            bindMembers(ps, 2, liveMembers);
            ps.setLong(3, MariaDbSql.micros(grace));
            return ps.executeUpdate();
          }
        });
  }

  @Override
  public List<String> liveMembers(String group) {
    return run(
        "live_members",
        c -> {
          List<String> live = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement(db.sql("live_members"))) {
            ps.setString(1, group);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                live.add(rs.getString(1));
              }
            }
          }
          return live;
        });
  }

  @Override
  public int forceRelease(String group, Collection<PartitionKey> partitions) {
    if (partitions.isEmpty()) {
      return 0;
    }
    List<PartitionKey> sorted = MariaDbSql.sorted(new java.util.LinkedHashSet<>(partitions));
    return run("force_release", c -> forceRelease(c, group, sorted));
  }

  @Override
  public GroupPolicy policy(String group) {
    GroupPolicy policy =
        db.one(
                "group_policy",
                ps -> {
                  ps.setString(1, group);
                  ps.setString(2, group);
                },
                rs -> {
                  return new GroupPolicy(
                      rs.getDouble(1),
                      Duration.ofMillis(rs.getLong(2)),
                      rs.getDouble(3),
                      rs.getDouble(4),
                      Duration.ofMillis(rs.getLong(5)),
                      Duration.ofMillis(rs.getLong(6)),
                      rs.getInt(7));
                })
            .orElse(GroupPolicy.DEFAULT);
    return policy;
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
          }
        });
  }

  /** Gives the held check-in connection back to the pool; safe to call twice. */
  @Override
  public void close() {
    idle.close();
  }
}
