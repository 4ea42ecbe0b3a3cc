package io.boxline;

import java.sql.Connection;
import java.util.List;

/**
 * Writes events in the caller's transaction. The connection must be open and have auto-commit off;
 * the events exist if and only if that transaction commits. Thread-safe.
 */
public interface Publisher {
  /** Publishes a typed event using its {@link EventTypes} registration. */
  PublishResult publish(Connection tx, Object event);

  /**
   * Publishes a typed event with per-call overrides (type, topic, key, headers, idempotency key).
   */
  PublishResult publish(Connection tx, Object event, PublishOptions options);

  /** Publishes a raw event. */
  PublishResult publish(Connection tx, OutgoingEvent event);

  /**
   * Publishes many events (typed objects and/or {@link OutgoingEvent}s) in one database round trip
   * (two when some carry idempotency keys). Results are in the same order as the input.
   */
  List<PublishResult> publishAll(Connection tx, List<?> events);

  /**
   * Tells Boxline that a transaction in which you published has committed. Optional: without it the
   * sequencer still finds the events (a publish starts a short run of quick looks, and remote
   * publishers send a bounded-rate NOTIFY), but calling it right after {@code commit()} hands them
   * over at once, which is what {@link Boxline#inTransaction} does for you and what a framework's
   * after-commit hook should do.
   */
  void committed();
}
