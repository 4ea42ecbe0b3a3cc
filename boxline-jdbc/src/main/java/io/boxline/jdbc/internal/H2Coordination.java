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
 * Consumer-group coordination in the H2 database that holds the log. Times come from the database
 * clock. Every lease statement locks rows in key order (lists are sorted and locked one row per
 * execution); a deadlock or lock timeout H2 reports anyway is retried a few times.
 */
final class H2Coordination implements CoordinationStore {
  private static final int ATTEMPTS = 4;

  private final JdbcSql db;
  private final String description;

  H2Coordination(JdbcSql db, String database) {
    this.db = db;
    this.description = "database coordination (" + database + ")";
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
        if (attempt >= ATTEMPTS || !H2Sql.retryable(e)) {
          throw db.fail(name, e);
        }
      }
    }
  }

  /** Runs {@code work} in a transaction, retrying after deadlocks. */
  private <T> T tx(String name, JdbcSql.Work<T> work) {
    for (int attempt = 1; ; attempt++) {
      try {
        return db.tx(name, work);
      } catch (io.boxline.StoreException e) {
        if (attempt >= ATTEMPTS
            || !(e.getCause() instanceof SQLException s && H2Sql.retryable(s))) {
          throw e;
        }
      }
    }
  }

  @Override
  public GroupView checkIn(String group, String member, double weight, Duration ttl) {
    return run(
        "check_in",
        c -> {
          // The view first, then the heartbeat: as with PostgreSQL's one-statement check-in, the
          // view may not show this heartbeat yet (the engine adds the member itself).
          List<Member> members = new ArrayList<>();
          List<Lease> leases = new ArrayList<>();
          Instant now = null;
          long policyStamp = GroupView.NO_POLICY_STAMP;
          try (PreparedStatement ps = c.prepareStatement(db.sql("check_in"))) {
            ps.setString(1, group);
            ps.setString(2, group);
            ps.setString(3, group);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                now = MariaDbSql.instant(rs.getLong(9));
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
                          MariaDbSql.instant(rs.getLong(8))));
                }
              }
            }
          }
          try (PreparedStatement ps = c.prepareStatement(db.sql("heartbeat"))) {
            ps.setString(1, group);
            ps.setString(2, member);
            ps.setDouble(3, weight);
            ps.setLong(4, MariaDbSql.micros(ttl));
            ps.executeUpdate();
          }
          return new GroupView(members, leases, now == null ? Instant.now() : now, policyStamp);
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
          try (PreparedStatement ps = c.prepareStatement(db.sql("create_lease"))) {
            for (PartitionKey k : sorted) {
              H2Sql.bindLease(ps, 1, group, k);
              H2Sql.insertIgnore(ps);
            }
          }
          return null;
        });
    return tx(
        "acquire_leases",
        c -> {
          long[] result = out.clone();
          try (PreparedStatement lock = c.prepareStatement(db.sql("acquire_lock"));
              PreparedStatement take = c.prepareStatement(db.sql("acquire_take"))) {
            for (PartitionKey k : sorted) {
              H2Sql.bindLease(lock, 1, group, k);
              long epoch;
              try (ResultSet rs = lock.executeQuery()) {
                if (!rs.next()) {
                  continue;
                }
                rs.getString(1);
                if (!rs.wasNull()) {
                  continue; // held by someone
                }
                epoch = rs.getLong(2) + 1;
              }
              take.setString(1, member);
              H2Sql.bindLease(take, 2, group, k);
              if (take.executeUpdate() != 1) {
                throw new SQLException("acquire_take missed a locked free lease " + k);
              }
              Integer i = index.get(k);
              if (i != null) {
                result[i] = epoch;
              }
            }
          }
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
            ps.setObject(2, H2Sql.strings(liveMembers));
            ps.setLong(3, MariaDbSql.micros(grace));
            return ps.executeUpdate();
          }
        });
  }

  @Override
  public int forceRelease(String group, Collection<PartitionKey> partitions) {
    if (partitions.isEmpty()) {
      return 0;
    }
    List<PartitionKey> sorted = MariaDbSql.sorted(new java.util.LinkedHashSet<>(partitions));
    return run(
        "force_release",
        c -> {
          int n = 0;
          try (PreparedStatement ps = c.prepareStatement(db.sql("force_release"))) {
            for (PartitionKey k : sorted) {
              H2Sql.bindLease(ps, 1, group, k);
              n += ps.executeUpdate();
            }
          }
          return n;
        });
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

  @Override
  public void close() {
    // shares the store's data source; nothing of its own to release
  }
}
