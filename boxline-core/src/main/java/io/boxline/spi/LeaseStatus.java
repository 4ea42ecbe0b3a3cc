package io.boxline.spi;

/** Outcome of taking or renewing the sequencer lease. */
public enum LeaseStatus {
  /** Another process holds a live lease. */
  NOT_HELD,
  /** Held; the outbox is empty. */
  HELD_IDLE,
  /** Held; the outbox holds rows to sequence. */
  HELD_WITH_WORK;

  public boolean held() {
    return this != NOT_HELD;
  }
}
