package io.boxline.spi;

/** What a {@link Settlement} did ({@link CursorStore#settle}). */
public enum CommitOutcome {
  /** The cursor moved (and the parks were written). */
  COMMITTED,
  /** The lease epoch is stale: another consumer owns the partition; nothing was written. */
  FENCED,
  /**
   * The log no longer holds those events at those sequences (a database crash lost a sequencer
   * batch that was handed over before it reached the disk); nothing was written.
   */
  LOG_CHANGED,
  /**
   * The cursor no longer stands where the committer left it: a database crash lost an asynchronous
   * cursor commit, or a rewind moved it. Nothing was written; the committer goes back to the stored
   * cursor.
   */
  CURSOR_MOVED
}
