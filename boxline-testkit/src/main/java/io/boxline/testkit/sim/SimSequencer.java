package io.boxline.testkit.sim;

import io.boxline.spi.LeaseStatus;
import io.boxline.spi.PartitionAssigner;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.Store;
import java.time.Duration;
import java.util.Random;

/**
 * A sequencer: it takes the sequencer lease when it has none and numbers a batch of the outbox when
 * it has. Two of them compete; a stall or clock jump lets the other take over while the first still
 * believes it leads.
 */
final class SimSequencer {
  private static final PartitionAssigner BY_RECORD =
      (topicId, key) -> {
        throw new IllegalStateException("the simulation's producers partition every event");
      };

  private final int index;
  private final Store store;
  private final Random random;
  private final Faults faults;
  private final Duration ttl;
  private boolean leads;

  SimSequencer(int index, Store store, Random random, Faults faults, Duration ttl) {
    this.index = index;
    this.store = store;
    this.random = random;
    this.faults = faults;
    this.ttl = ttl;
  }

  String name() {
    return "sequencer-" + index;
  }

  void crash() {
    leads = false;
  }

  String turn() {
    try {
      if (!leads) {
        LeaseStatus s =
            faults.through("sequencer lease", () -> store.acquireSequencerLease(name(), ttl));
        leads = s.held();
        if (!leads) {
          return "not leader";
        }
      }
      int max = 1 + random.nextInt(16);
      SequencedBatch b =
          faults.through("sequence", () -> store.sequence(name(), ttl, max, BY_RECORD));
      if (!b.leaseHeld()) {
        leads = false;
        return "lost the lease";
      }
      return "sequenced " + b.events();
    } catch (Faults.LostCall e) {
      return "call lost (" + e.ran + ")";
    }
  }
}
