package io.boxline;

import java.sql.Connection;

/**
 * Handles an event inside the database transaction in which Boxline moves the subscription's
 * cursor: the handler's writes and the cursor advance commit together, so each event's effect is
 * applied exactly once (contract point 6), across crashes and hand-overs. Do not commit, roll back
 * or close {@code tx}; throw to fail the event (the transaction is rolled back and the retry policy
 * applies).
 */
@FunctionalInterface
public interface TransactionalHandler {
  void handle(Event event, Connection tx) throws java.sql.SQLException;
}
