package io.boxline;

import java.time.Duration;
import java.time.Instant;
import java.util.Set;

/**
 * Sees what one Boxline instance does, for metrics and monitoring ({@code boxline-micrometer}
 * implements it). Register with {@link Boxline.Builder#observer(BoxlineObserver)}; several may be
 * registered and each sees every call.
 *
 * <p>Every method has an empty default. Methods are called on Boxline's own threads (the
 * publisher's caller, the sequencer, consumer workers and group threads), often on the hot path:
 * keep them quick and non-blocking (increment a counter, record a timer). An exception thrown by an
 * observer is logged and otherwise ignored; it never fails a publish or a delivery. With no
 * observer registered Boxline makes none of these calls.
 *
 * <p>The engine reports only what this instance does; figures that need a query (backlog, lag,
 * outbox size) come from {@link Admin#lagBySubscription()} and {@link Admin#outboxBacklog()}.
 */
public interface BoxlineObserver {

  /**
   * The instance has started ({@link Boxline#start()}); {@code boxline} is usable from now on, e.g.
   * to schedule a collector that reads {@link Boxline#admin()}.
   */
  default void started(Boxline boxline) {}

  /**
   * The instance is closing: called first in {@link Boxline#close()}, before consumers, loops and
   * the store are stopped ({@link Boxline#admin()} already refuses calls). Stop anything {@link
   * #started} began, with a bounded wait.
   */
  default void closing(Boxline boxline) {}

  /**
   * {@code events} events were written to the outbox of {@code topic} in the caller's transaction
   * (duplicates by idempotency key excluded). Called before that transaction commits, so events
   * that are rolled back are counted too; {@link #sequenced} counts only committed ones.
   */
  default void published(TopicName topic, int events) {}

  /**
   * This instance's sequencer moved {@code events} (at least one) committed events from the outbox
   * into the log in one transaction that took {@code took}.
   */
  default void sequenced(int events, Duration took) {}

  /**
   * A handler of {@code subscription} returned normally for {@code event} after {@code took}. For a
   * batch handler, every event of a batch that returned normally is reported with the whole batch's
   * duration. Events skipped as inbox duplicates are not reported.
   */
  default void handled(String subscription, Event event, Duration took) {}

  /**
   * A handler of {@code subscription} threw for {@code event}; {@code attempt} counts from 1 across
   * in-place and parked attempts. Not called for a {@link HandlerDecision} (the handler decided,
   * nothing failed): see {@link #retrying} and {@link #deadLettered}.
   */
  default void failed(String subscription, Event event, Throwable error, int attempt) {}

  /**
   * {@code event} gets another attempt at {@code nextAttemptAt} after attempt {@code attempt}
   * failed (or the handler asked for it with {@link HandlerDecision#retryIn}), either in place or
   * parked so that its partition moves on.
   */
  default void retrying(String subscription, Event event, int attempt, Instant nextAttemptAt) {}

  /** {@code event} became a dead letter of {@code subscription}. */
  default void deadLettered(String subscription, Event event, String reason) {}

  /**
   * A consumer of {@code subscription} read {@code event} from a row it cannot deliver as it is
   * ({@code reason} says why; see {@link MalformedEventException}). Called once per consumer and
   * event; every attempt at it then fails until it is dead-lettered.
   */
  default void malformed(String subscription, Event event, String reason) {}

  /** Consumer {@code consumerId} of {@code subscription} took these partitions. */
  default void partitionsAssigned(
      String subscription, String consumerId, Set<TopicPartition> partitions) {}

  /** Consumer {@code consumerId} handed these partitions back gracefully (or stopped). */
  default void partitionsRevoked(
      String subscription, String consumerId, Set<TopicPartition> partitions) {}

  /**
   * Consumer {@code consumerId} lost these partitions without a graceful hand-over: it missed its
   * heartbeat deadline, or a cursor commit was fenced because another consumer took over.
   */
  default void partitionsLost(
      String subscription, String consumerId, Set<TopicPartition> partitions) {}

  /**
   * Not called by the engine: relays and other forwarders call it, through {@link
   * Boxline#observer()}, after handing {@code events} events of {@code topic} to {@code sink} (a
   * broker, a webhook), so that sink latency is measured like everything else. {@code error} is
   * null on success. The relay ({@code boxline-relay}) calls it once per send with the events the
   * sink confirmed and, when the send failed for some of them, once more with those and the sink's
   * exception (both with the send's duration).
   */
  default void sinkDelivered(
      String sink, TopicName topic, int events, Duration took, Throwable error) {}
}
