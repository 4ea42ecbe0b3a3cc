package io.boxline.spi;

import java.util.List;

/**
 * Receives wake-ups that a store hears from other processes. Called from the store's listener
 * thread.
 */
public interface WakeupListener {
  /** Some producer committed events into the outbox. */
  void outboxChanged();

  /**
   * The sequencer appended to these partitions; {@code heads} is null when the message did not list
   * them (too many), meaning "look at every partition".
   */
  void logAppended(List<PartitionHead> heads);

  /**
   * The listener (re)connected: messages may have been missed, so everything should be re-checked.
   */
  void resynchronize();
}
