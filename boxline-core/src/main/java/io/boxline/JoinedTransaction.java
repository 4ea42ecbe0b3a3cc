package io.boxline;

import java.sql.Connection;

/**
 * A transaction that the application's framework runs (Spring's transaction manager, say), joined
 * by Boxline with {@link Boxline#join}. Publishing and scheduling on {@link #connection()} then
 * behave as inside {@link Boxline#inTransaction}: events of {@link Sequencing#IN_TRANSACTION}
 * topics are held back and written just before the commit, what a rollback to a savepoint undid is
 * forgotten, and the committed events are handed to the sequencer and to local consumers the moment
 * the commit is known.
 *
 * <p>The framework reports the transaction's course: {@link #savepoint} and {@link #rolledBackTo}
 * as savepoints are set and used, {@link #beforeCommit} just before it commits (its failure must
 * roll the transaction back), {@link #afterCommit} once it committed, and {@link #completed} at the
 * end either way. All calls come from the thread that runs the transaction. Boxline never commits,
 * rolls back or closes the connection.
 */
public interface JoinedTransaction {
  /** The framework's connection, on which to publish and schedule. */
  Connection connection();

  /** The framework set {@code savepoint} (any object that identifies it). */
  void savepoint(Object savepoint);

  /**
   * The framework rolled back to {@code savepoint}: the events held back since then are forgotten.
   *
   * @throws ConnectionStateException when {@code savepoint} was never reported
   */
  void rolledBackTo(Object savepoint);

  /** The transaction is about to commit: writes the events held back to the log. */
  void beforeCommit();

  /** The transaction committed: its events go to the sequencer and to local consumers. */
  void afterCommit();

  /** The transaction ended (committed or rolled back): Boxline forgets it. Idempotent. */
  void completed();
}
