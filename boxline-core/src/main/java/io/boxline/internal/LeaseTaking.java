package io.boxline.internal;

import io.boxline.spi.CoordinationStore;
import io.boxline.spi.CursorStore;
import io.boxline.spi.PartitionKey;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;

/**
 * Taking partitions for a member, as Java consumers and remote members both do: acquire the free
 * ones in the coordination store, then copy each new lease's epoch onto the partition's cursor
 * (fencing every earlier owner). A lease whose epoch is not newer than the cursor's is given back.
 */
final class LeaseTaking {
  private static final System.Logger LOG = System.getLogger(DefaultConsumer.class.getName());

  private LeaseTaking() {}

  /** A partition taken: its lease epoch and the cursor's position. */
  record Taken(PartitionKey key, long epoch, long position) {}

  static List<Taken> take(
      CoordinationStore coordination,
      CursorStore cursors,
      String group,
      long subscriptionId,
      String member,
      List<PartitionKey> wanted) {
    if (wanted.isEmpty()) {
      return List.of();
    }
    long[] epochs = coordination.acquire(group, wanted, member);
    List<PartitionKey> won = new ArrayList<>();
    List<Long> wonEpochs = new ArrayList<>();
    for (int i = 0; i < epochs.length; i++) {
      if (epochs[i] >= 0) {
        won.add(wanted.get(i));
        wonEpochs.add(epochs[i]);
      }
    }
    if (won.isEmpty()) {
      return List.of();
    }
    long[] e = wonEpochs.stream().mapToLong(Long::longValue).toArray();
    long[] positions = cursors.fenceCursors(subscriptionId, won, e, member);
    List<Taken> taken = new ArrayList<>();
    for (int i = 0; i < won.size(); i++) {
      PartitionKey k = won.get(i);
      if (positions[i] < 0) {
        LOG.log(
            Level.ERROR,
            "consumer {0}: lease epoch {1} for {2} is not newer than the cursor''s; the coordination"
                + " store handed out an old epoch. Releasing it.",
            member,
            e[i],
            k);
        coordination.release(group, k, member, e[i]);
        continue;
      }
      taken.add(new Taken(k, e[i], positions[i]));
    }
    return taken;
  }
}
