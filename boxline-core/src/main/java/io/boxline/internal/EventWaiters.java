package io.boxline.internal;

import io.boxline.spi.PartitionHead;
import io.boxline.spi.WakeupListener;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Futures that complete when a log of the topics they wait for grows: in this process (the local
 * sequencer, in-transaction publishers) or, where the store hears other processes (NOTIFY, the
 * wake-up poll), in another. A wait holds no thread, so a server can keep thousands of members'
 * long polls waiting.
 */
final class EventWaiters implements WakeupListener {
  private record Waiter(Set<Long> topicIds, CompletableFuture<Void> done) {}

  private final Set<Waiter> waiting = ConcurrentHashMap.newKeySet();

  /** Appends heard per topic, and wake-ups that named no topic (any log may have grown). */
  private final Map<Long, AtomicLong> appends = new ConcurrentHashMap<>();

  private final AtomicLong everywhere = new AtomicLong();

  /** Whether the store tells this process of other processes' appends (set at start). */
  private volatile boolean hearsOthers;

  void hearsOtherProcesses(boolean hears) {
    hearsOthers = hears;
  }

  /**
   * Whether {@link #version} covers every append, this process's and every other's: without the
   * store's wake-ups it sees only this process's.
   */
  boolean hearsEveryAppend() {
    return hearsOthers;
  }

  /**
   * A number that changes whenever a log of {@code topicIds} may have grown since it was last
   * taken: take it before reading the logs, and an equal number later means that read still holds.
   * Counted before the waiters are woken, so a reader woken by an append sees the new number.
   */
  long version(Set<Long> topicIds) {
    long v = everywhere.get();
    for (Long id : topicIds) {
      AtomicLong n = appends.get(id);
      if (n != null) {
        v += n.get();
      }
    }
    return v;
  }

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
    for (PartitionHead h : heads) {
      appends.computeIfAbsent(h.topicId(), k -> new AtomicLong()).incrementAndGet();
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
    everywhere.incrementAndGet();
    waiting.forEach(w -> w.done().complete(null));
  }
}
