package io.boxline.testkit.process;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.GroupPolicy;
import io.boxline.Names;
import io.boxline.etcd.EtcdCoordination;
import io.boxline.jdbc.JdbcStore;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.MemberStatus;
import io.boxline.spi.PartitionKey;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine.Option;

/**
 * Child process: deletes a subscription (forced, while its own consumer holds leases) with the
 * group coordinated in etcd, and stops dead inside the delete so that the parent can SIGKILL it
 * there. Its coordination store passes every call to etcd, except that the {@code --pauseAt}-th
 * call of {@code forceRelease} prints {@code PAUSED forceRelease N} and never returns.
 *
 * <p>Arguments (besides those of {@link ChildMain}): {@code --subscription}, {@code --etcd}
 * (comma-separated endpoints), {@code --prefix} (etcd key prefix), {@code --pauseAt} (1 = the
 * clean-up before the database delete, 2 = the one after it). Prints {@code HOLDING n} once its
 * consumer holds n partitions, then {@code DELETING}.
 */
public final class DeletingProcess {
  private DeletingProcess() {}

  /** This main's arguments, next to those of {@link ChildMain}. */
  static final class Args extends ChildMain {
    @Option(names = "--subscription", required = true)
    String subscription;

    @Option(names = "--etcd", required = true)
    String etcd;

    @Option(names = "--prefix", required = true)
    String prefix;

    @Option(names = "--pauseAt")
    int pauseAt = 1;
  }

  public static void main(String[] argv) throws Exception {
    Args child = ChildMain.init(new Args(), argv);
    String schema = Names.requireSchema(child.schema);
    String subscription = child.subscription;
    int pauseAt = child.pauseAt;
    CoordinationStore etcd =
        EtcdCoordination.builder()
            .endpoints(List.of(child.etcd.split(",")))
            .keyPrefix(child.prefix)
            .build();
    HikariDataSource pool = child.pool("deleter", 8);
    Boxline boxline =
        Boxline.builder()
            .store(JdbcStore.builder(pool).schema(schema).build())
            .coordination(new Pausing(etcd, pauseAt))
            .instanceId("deleter")
            .sequencer(false)
            .build()
            .start();
    Consumer consumer =
        boxline.consumer(subscription).id("deleter-member").handler(e -> {}).start();
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (consumer.assignedPartitions().isEmpty()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the consumer got no partition within 60 s");
      }
      LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
    }
    ChildMain.log("HOLDING " + consumer.assignedPartitions().size());
    ChildMain.log("DELETING");
    boolean deleted = boxline.admin().deleteSubscription(subscription, true);
    ChildMain.log("DELETED " + deleted); // only when the pause point was never reached
    child.awaitShutdown();
  }

  /** etcd, except that one forceRelease call never returns. */
  private static final class Pausing implements CoordinationStore {
    private final CoordinationStore d;
    private final int pauseAt;
    private final AtomicInteger forceReleases = new AtomicInteger();

    Pausing(CoordinationStore delegate, int pauseAt) {
      this.d = delegate;
      this.pauseAt = pauseAt;
    }

    @Override
    public int forceRelease(String group, Collection<PartitionKey> partitions) {
      int n = forceReleases.incrementAndGet();
      if (n == pauseAt) {
        ChildMain.log("PAUSED forceRelease " + n);
        while (true) {
          LockSupport.park(); // until the parent kills this process
        }
      }
      return d.forceRelease(group, partitions);
    }

    @Override
    public String describe() {
      return d.describe();
    }

    @Override
    public GroupView checkIn(
        String group, String member, double weight, Duration ttl, MemberStatus status) {
      return d.checkIn(group, member, weight, ttl, status);
    }

    @Override
    public GroupView view(String group) {
      return d.view(group);
    }

    @Override
    public void leave(String group, String member) {
      d.leave(group, member);
    }

    @Override
    public int renew(String group, java.util.Collection<String> members, Duration ttl) {
      return d.renew(group, members, ttl);
    }

    @Override
    public List<java.util.OptionalLong> acquire(
        String group, List<PartitionKey> partitions, String member) {
      return d.acquire(group, partitions, member);
    }

    @Override
    public boolean markReleasing(String group, PartitionKey partition, String member, long epoch) {
      return d.markReleasing(group, partition, member, epoch);
    }

    @Override
    public boolean release(String group, PartitionKey partition, String member, long epoch) {
      return d.release(group, partition, member, epoch);
    }

    @Override
    public int reclaim(String group, Set<String> liveMembers, Duration grace) {
      return d.reclaim(group, liveMembers, grace);
    }

    @Override
    public GroupPolicy policy(String group) {
      return d.policy(group);
    }

    @Override
    public void setPolicy(Optional<String> group, Optional<GroupPolicy> policy) {
      d.setPolicy(group, policy);
    }

    @Override
    public List<String> liveMembers(String group) {
      return d.liveMembers(group);
    }

    @Override
    public void close() {
      d.close();
    }
  }
}
