package io.boxline.internal;

import io.boxline.spi.PartitionHead;
import io.boxline.spi.WakeupListener;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fans wake-ups out to the sequencer and the consumers of one Boxline instance: in-process signals
 * from local publishers and the local sequencer, and whatever the store's listener hears from other
 * processes.
 */
final class WakeupBus implements WakeupListener {
  private final List<WakeupListener> listeners = new CopyOnWriteArrayList<>();
  final AtomicLong received = new AtomicLong();

  void add(WakeupListener l) {
    listeners.add(l);
  }

  void remove(WakeupListener l) {
    listeners.remove(l);
  }

  @Override
  public void outboxChanged() {
    for (WakeupListener l : listeners) {
      l.outboxChanged();
    }
  }

  @Override
  public void logAppended(List<PartitionHead> heads) {
    for (WakeupListener l : listeners) {
      l.logAppended(heads);
    }
  }

  @Override
  public void resynchronize() {
    for (WakeupListener l : listeners) {
      l.resynchronize();
    }
  }

  /** The store's listener feeds this one so that remote wake-ups are counted. */
  WakeupListener remote() {
    return new WakeupListener() {
      @Override
      public void outboxChanged() {
        received.incrementAndGet();
        WakeupBus.this.outboxChanged();
      }

      @Override
      public void logAppended(List<PartitionHead> heads) {
        received.incrementAndGet();
        WakeupBus.this.logAppended(heads);
      }

      @Override
      public void resynchronize() {
        WakeupBus.this.resynchronize();
      }
    };
  }
}
