package io.boxline.internal;

import io.boxline.JoinedTransaction;
import java.sql.Connection;

/**
 * A framework's transaction that Boxline joined: the framework reports its course, and the
 * publisher plays the part it plays in {@code inTransaction}'s ({@link TransactionScope}). After
 * the commit the events go to consumers' workers, never to this thread: the framework still holds
 * the transaction's resources while it reports the commit, so a handler run here would join a
 * transaction that is over.
 */
final class JoinedScope implements JoinedTransaction {
  private final TransactionScope scope;
  private final TransactionScope.Participant participant;
  private boolean completed;

  JoinedScope(TransactionScope scope, TransactionScope.Participant participant) {
    this.scope = scope;
    this.participant = participant;
  }

  @Override
  public Connection connection() {
    return scope.tx;
  }

  @Override
  public void savepoint(Object savepoint) {
    scope.savepoint(java.util.Objects.requireNonNull(savepoint, "savepoint"));
  }

  @Override
  public void rolledBackTo(Object savepoint) {
    scope.rolledBackTo(java.util.Objects.requireNonNull(savepoint, "savepoint"));
  }

  @Override
  public void beforeCommit() {
    participant.beforeCommit(scope);
  }

  @Override
  public void afterCommit() {
    participant.afterCommit(scope);
  }

  @Override
  public void completed() {
    if (!completed) {
      completed = true;
      TransactionScope.leave(scope);
    }
  }

  @Override
  public String toString() {
    return "JoinedTransaction(" + scope.tx + ")";
  }
}
