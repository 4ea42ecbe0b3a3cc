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
 * Consumer-group coordination in the MariaDB / MySQL database that holds the log. Times come from
 * the database clock. Every lease statement locks rows in key order (lists are sorted, and read
 * with {@code STRAIGHT_JOIN} so rows are locked in list order); a deadlock the server reports
 * anyway is retried a few times.
 */
final class MariaDbCoordination implements CoordinationStore {
  private static final int ATTEMPTS = 4;

  private final JdbcSql db;
  private final String description;

  MariaDbCoordination(JdbcSql db, String database) {
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
        if (attempt >= ATTEMPTS || !MariaDbSql.retryable(e)) {
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
            || !(e.getCause() instanceof SQLException s && MariaDbSql.retryable(s))) {
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
          for (int from = 0; from < sorted.size(); from += MariaDbSql.MAX_ROWS) {
            List<PartitionKey> chunk =
                sorted.subList(from, Math.min(sorted.size(), from + MariaDbSql.MAX_ROWS));
            try (PreparedStatement ps =
                c.prepareStatement(MariaDbSql.repeatRows(db.sql("create_leases"), chunk.size()))) {
              int i = 1;
              for (PartitionKey k : chunk) {
                ps.setString(i++, group);
                ps.setLong(i++, k.topicId());
                ps.setInt(i++, k.partition());
              }
              ps.executeUpdate();
            }
          }
          return null;
        });
    String json = MariaDbSql.json(sorted);
    return tx(
        "acquire_leases",
        c -> {
          long[] result = out.clone();
          List<PartitionKey> free = new ArrayList<>();
          Map<PartitionKey, Long> epochs = new HashMap<>();
          try (PreparedStatement ps = c.prepareStatement(db.sql("acquire_lock"))) {
            ps.setString(1, json);
            ps.setString(2, group);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                rs.getString(3);
                if (rs.wasNull()) {
                  PartitionKey k = PartitionKey.of(rs.getLong(1), rs.getInt(2));
                  free.add(k);
                  epochs.put(k, rs.getLong(4) + 1);
                }
              }
            }
          }
          if (free.isEmpty()) {
            return result;
          }
          try (PreparedStatement ps = c.prepareStatement(db.sql("acquire_take"))) {
            ps.setString(1, MariaDbSql.json(MariaDbSql.sorted(free)));
            ps.setString(2, group);
            ps.setString(3, member);
            int n = ps.executeUpdate();
            if (n != free.size()) {
              throw new SQLException(
                  "acquire_take changed " + n + " of " + free.size() + " locked free leases");
            }
          }
          for (PartitionKey k : free) {
            Integer i = index.get(k);
            if (i != null) {
              result[i] = epochs.get(k);
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
            ps.setString(2, MariaDbSql.jsonStrings(liveMembers));
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
    String json = MariaDbSql.json(MariaDbSql.sorted(new java.util.LinkedHashSet<>(partitions)));
    return run(
        "force_release",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(db.sql("force_release"))) {
            ps.setString(1, json);
            ps.setString(2, group);
            return ps.executeUpdate();
          }
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
