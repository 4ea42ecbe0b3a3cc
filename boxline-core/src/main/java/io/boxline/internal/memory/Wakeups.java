package io.boxline.internal.memory;

import io.boxline.spi.PartitionHead;
import io.boxline.spi.WakeupListener;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * The in-memory store's counterpart of LISTEN/NOTIFY: what one {@link InMemoryStore} of a database
 * announces (outbox commits, sequenced heads, redrives) reaches the listeners of every store of it,
 * on a thread of its own ({@code boxline-inmemory-wakeups}) that runs while anyone listens.
 */
final class Wakeups {
  private static final System.Logger LOG = System.getLogger(Wakeups.class.getName());

  private final List<WakeupListener> listeners = new CopyOnWriteArrayList<>();
  private ExecutorService thread;

  synchronized void add(WakeupListener listener) {
    listeners.add(listener);
    if (thread == null) {
      thread =
          Executors.newSingleThreadExecutor(
              r -> {
                Thread t = new Thread(r, "boxline-inmemory-wakeups");
                t.setDaemon(true);
                return t;
              });
    }
  }

  synchronized void remove(List<WakeupListener> gone) {
    for (WakeupListener l : gone) {
      listeners.remove(l);
    }
    if (listeners.isEmpty() && thread != null) {
      thread.shutdown();
      thread = null;
    }
  }

  boolean listening() {
    return !listeners.isEmpty();
  }

  void outboxChanged() {
    fire(WakeupListener::outboxChanged);
  }

  void logAppended(List<PartitionHead> heads) {
    List<PartitionHead> copy = List.copyOf(heads);
    fire(l -> l.logAppended(copy));
  }

  void resynchronize() {
    fire(WakeupListener::resynchronize);
  }

  private synchronized void fire(Consumer<WakeupListener> call) {
    if (thread == null) {
      return;
    }
    thread.execute(
        () -> {
          for (WakeupListener l : listeners) {
            try {
              call.accept(l);
            } catch (RuntimeException e) {
              LOG.log(Level.WARNING, "a wake-up listener failed", e);
            }
          }
        });
  }
}
