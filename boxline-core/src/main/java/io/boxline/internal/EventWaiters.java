package io.boxline.internal;

import io.boxline.spi.PartitionHead;
import io.boxline.spi.WakeupListener;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Futures that complete when a log of the topics they wait for grows: in this process (the local
 * sequencer, in-transaction publishers) or, where the store hears other processes (NOTIFY, the
 * wake-up poll), in another. A wait holds no thread, so a server can keep thousands of members'
 * long polls waiting.
 */
final class EventWaiters implements WakeupListener {
  private record Waiter(Set<Long> topicIds, CompletableFuture<Void> done) {}

  private final Set<Waiter> waiting = ConcurrentHashMap.newKeySet();

  /** Completes when a log of {@code topicIds} grows, or after {@code timeout}. */
  CompletableFuture<Void> await(Set<Long> topicIds, Duration timeout) {
    Waiter w = new Waiter(Set.copyOf(topicIds), new CompletableFuture<>());
    waiting.add(w);
    w.done()
        .completeOnTimeout(null, Math.max(0, timeout.toMillis()), TimeUnit.MILLISECONDS)
        .whenComplete((v, e) -> waiting.remove(w));
    return w.done();
  }

  /** How many waits are open, for the gauge. */
  int size() {
    return waiting.size();
  }

  @Override
  public void outboxChanged() {}

  @Override
  public void logAppended(List<PartitionHead> heads) {
    if (heads == null) {
      resynchronize();
      return;
    }
    for (Waiter w : waiting) {
      for (PartitionHead h : heads) {
        if (w.topicIds().contains(h.topicId())) {
          w.done().complete(null);
          break;
        }
      }
    }
  }

  @Override
  public void resynchronize() {
    waiting.forEach(w -> w.done().complete(null));
  }
}
