package io.boxline.spi;

import java.sql.Connection;

/**
 * What {@link Store#beginFenced} gives: a transaction holding the partition's cursor row, or why
 * there is none.
 *
 * @param connection the transaction (auto-commit off), or null when refused
 * @param refusal null with a connection; else {@link CommitOutcome#FENCED} (another consumer's
 *     epoch) or {@link CommitOutcome#CURSOR_MOVED} (the cursor is not where the consumer left it: a
 *     rewind, or a database crash that lost an asynchronous commit)
 */
public record FencedTransaction(Connection connection, CommitOutcome refusal) {
  /** Refused because another consumer's epoch is on the cursor. */
  public static final FencedTransaction FENCED = new FencedTransaction(null, CommitOutcome.FENCED);

  /** Refused because the cursor is not at the position the consumer expected. */
  public static final FencedTransaction MOVED =
      new FencedTransaction(null, CommitOutcome.CURSOR_MOVED);
}
