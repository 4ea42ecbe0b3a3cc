package io.boxline.internal;

import io.boxline.spi.CoordinationStore;
import io.boxline.spi.CursorStore;
import io.boxline.spi.Fence;
import io.boxline.spi.PartitionKey;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

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
    List<OptionalLong> epochs = coordination.acquire(group, wanted, member);
    List<Fence> won = new ArrayList<>();
    for (int i = 0; i < epochs.size(); i++) {
      if (epochs.get(i).isPresent()) {
        won.add(new Fence(wanted.get(i), epochs.get(i).getAsLong()));
      }
    }
    if (won.isEmpty()) {
      return List.of();
    }
    List<OptionalLong> positions = cursors.fenceCursors(subscriptionId, won, member);
    List<Taken> taken = new ArrayList<>();
    for (int i = 0; i < won.size(); i++) {
      PartitionKey k = won.get(i).partition();
      long epoch = won.get(i).epoch();
      if (positions.get(i).isEmpty()) {
        LOG.log(
            Level.ERROR,
            "consumer {0}: lease epoch {1} for {2} is not newer than the cursor''s; the coordination"
                + " store handed out an old epoch. Releasing it.",
            member,
            epoch,
            k);
        coordination.release(group, k, member, epoch);
        continue;
      }
      taken.add(new Taken(k, epoch, positions.get(i).getAsLong()));
    }
    return taken;
  }
}
