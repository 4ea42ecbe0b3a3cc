package io.boxline.jdbc.internal;

import io.boxline.GroupPolicy;
import io.boxline.StoreException;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.PartitionKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;

/**
 * Consumer-group coordination in the PostgreSQL database that holds the log (the default). A
 * check-in is one statement; lease acquisition is a compare-and-set on "nobody holds it" for any
 * number of partitions in one statement. Times come from the database clock, so members on hosts
 * with skewed clocks agree.
 */
final class PostgresCoordination implements CoordinationStore {
  private final DataSource dataSource;
  private final Map<String, String> q;
  private final String description;

  /** Check-ins run on the store's held connection (see {@link IdleConnection}). */
  private final IdleConnection idle;

  PostgresCoordination(
      DataSource dataSource, Map<String, String> queries, String database, IdleConnection idle) {
    this.idle = idle;
    this.dataSource = dataSource;
    this.q = queries;
    this.description = "database coordination (" + database + ")";
  }

  @Override
  public String describe() {
    return description;
  }

  private StoreException fail(String name, SQLException e) {
    return new StoreException(name, q.get(name), e);
  }

  private Connection connect() throws SQLException {
    Connection c = dataSource.getConnection();
    if (!c.getAutoCommit()) {
      c.setAutoCommit(true);
    }
    return c;
  }

  @Override
  public GroupView checkIn(String group, String member, double weight, Duration ttl) {
    try (Connection c = idle.borrow();
        PreparedStatement ps = c.prepareStatement(q.get("check_in"))) {
      ps.setString(1, group);
      ps.setString(2, member);
      ps.setDouble(3, weight);
      ps.setDouble(4, ttl.toMillis() / 1000.0);
      ps.setString(5, group);
      ps.setString(6, group);
      ps.setString(7, group);
      try (ResultSet rs = ps.executeQuery()) {
        return SqlCoordination.readView(rs, (r, column) -> r.getTimestamp(column).toInstant());
      }
    } catch (SQLException e) {
      throw fail("check_in", e);
    }
  }

  @Override
  public void leave(String group, String member) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(q.get("leave_group"))) {
      ps.setString(1, group);
      ps.setString(2, member);
      ps.setString(3, group);
      ps.setString(4, member);
      ps.executeUpdate();
    } catch (SQLException e) {
      throw fail("leave_group", e);
    }
  }

  @Override
  public long[] acquire(String group, List<PartitionKey> partitions, String member) {
    long[] out = new long[partitions.size()];
    Arrays.fill(out, -1);
    if (partitions.isEmpty()) {
      return out;
    }
    // A fixed lock order keeps two members that reach for overlapping sets from deadlocking.
    List<PartitionKey> sorted = new ArrayList<>(partitions);
    sorted.sort(
        Comparator.comparingLong(PartitionKey::topicId).thenComparingInt(PartitionKey::partition));
    Map<PartitionKey, Integer> index = new HashMap<>();
    for (int i = 0; i < partitions.size(); i++) {
      index.put(partitions.get(i), i);
    }
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(q.get("acquire_leases"))) {
      ps.setString(1, group);
      ps.setString(2, member);
      ps.setArray(
          3, c.createArrayOf("bigint", sorted.stream().map(PartitionKey::topicId).toArray()));
      ps.setArray(
          4, c.createArrayOf("integer", sorted.stream().map(PartitionKey::partition).toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Integer i = index.get(PartitionKey.of(rs.getLong(1), rs.getInt(2)));
          if (i != null) {
            out[i] = rs.getLong(3);
          }
        }
      }
      return out;
    } catch (SQLException e) {
      throw fail("acquire_leases", e);
    }
  }

  private boolean leaseUpdate(
      String name, String group, PartitionKey p, String member, long epoch) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(q.get(name))) {
      ps.setString(1, group);
      ps.setLong(2, p.topicId());
      ps.setInt(3, p.partition());
      ps.setString(4, member);
      ps.setLong(5, epoch);
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw fail(name, e);
    }
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
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(q.get("reclaim_leases"))) {
      ps.setString(1, group);
      ps.setString(2, group);
      ps.setArray(3, c.createArrayOf("text", liveMembers.toArray()));
      ps.setDouble(4, grace.toMillis() / 1000.0);
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw fail("reclaim_leases", e);
    }
  }

  @Override
  public List<String> liveMembers(String group) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(q.get("live_members"))) {
      ps.setString(1, group);
      List<String> live = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          live.add(rs.getString(1));
        }
      }
      return live;
    } catch (SQLException e) {
      throw fail("live_members", e);
    }
  }

  @Override
  public int forceRelease(String group, Collection<PartitionKey> partitions) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(q.get("force_release"))) {
      ps.setArray(
          1, c.createArrayOf("bigint", partitions.stream().map(PartitionKey::topicId).toArray()));
      ps.setArray(
          2,
          c.createArrayOf("integer", partitions.stream().map(PartitionKey::partition).toArray()));
      ps.setString(3, group);
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw fail("force_release", e);
    }
  }

  @Override
  public GroupPolicy policy(String group) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(q.get("group_policy"))) {
      ps.setString(1, group);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return GroupPolicy.DEFAULT;
        }
        return new GroupPolicy(
            rs.getDouble(1),
            Duration.ofMillis(rs.getLong(2)),
            rs.getDouble(3),
            rs.getDouble(4),
            Duration.ofMillis(rs.getLong(5)),
            Duration.ofMillis(rs.getLong(6)),
            rs.getInt(7));
      }
    } catch (SQLException e) {
      throw fail("group_policy", e);
    }
  }

  @Override
  public void setPolicy(Optional<String> group, Optional<GroupPolicy> policy) {
    String name = group.orElse("");
    String query = policy.isPresent() ? "upsert_group_policy" : "delete_group_policy";
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(q.get(query))) {
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
      ps.executeUpdate();
    } catch (SQLException e) {
      throw fail(query, e);
    }
  }

  @Override
  public void close() {
    // shares the store's data source; nothing of its own to release
  }
}
