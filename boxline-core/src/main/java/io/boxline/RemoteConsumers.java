package io.boxline;

import java.time.Duration;
import java.util.List;

/**
 * Members of a subscription's consumer group that are not Java consumers: programs that fetch
 * events and settle them through an API (the server's HTTP consumers), in any language. They share
 * the group's partitions with Java consumers under the same leases, epochs and fair shares, and
 * their events go through the same retry, parking and dead-letter store, so a key's order holds
 * across both. Every call reads and writes the store only: any process may serve any member.
 *
 * <p>A member calls {@link #fetch} at least every {@link Batch#checkInWithin} (or it is declared
 * dead after the group policy's deadline and its partitions move on), handles the events, and
 * {@link #settle settles} each one: done, retry later, or dead letter. Per partition the cursor
 * moves over the events settled, so events must be settled in the order they were fetched (a later
 * fetch delivers the unsettled ones again). After settling an event as RETRY, a member must not
 * handle the later events of its key from the same fetch: it leaves them out of the settlement, and
 * they are parked behind the retry and delivered after it. That is what keeps a key's order through
 * a retry.
 */
public interface RemoteConsumers {

  /**
   * Checks the member in (joining the group if new), moves it toward its fair share of the
   * partitions, and returns up to {@code maxEvents} events from the partitions it holds: retries
   * that are due first, then new events after the cursor. Events whose key waits behind a parked
   * one, and events not yet due, are not delivered; they are parked when the cursor passes them.
   *
   * @throws NotFoundException when the subscription does not exist
   * @throws GroupFullException when the group has its policy's maximum of members
   */
  Batch fetch(String subscription, String member, double weight, int maxEvents);

  /**
   * {@link #fetch(String, String, double, int)} for a subscription the caller has just looked up (a
   * server that checked its caller's access to it): the subscription is not read again.
   */
  default Batch fetch(SubscriptionInfo subscription, String member, double weight, int maxEvents) {
    return fetch(subscription.name(), member, weight, maxEvents);
  }

  /**
   * Settles fetched events. Per partition, the new events are settled as a run from the first
   * fetched one: each event up to the highest settled must be settled (or be one the fetch left
   * out). Per partition, the retries are recorded in one transaction and the cursor move with its
   * parked events in another; each partition is settled on its own, so one refused partition leaves
   * the others settled. Settle each fetch's events of a partition in one call: its ack ids name the
   * cursor the fetch saw.
   *
   * @throws PartitionsFencedException when the member no longer holds some partitions under the
   *     epoch it fetched with, or their cursors moved (a rewind): it names them; every other
   *     partition of the call was settled. Fetch again
   * @throws ValidationException when an ack id is not one {@link #fetch} gave out, or a run has a
   *     hole
   */
  int settle(String subscription, String member, List<Settlement> settlements);

  /** {@link #settle(String, String, List)} for a subscription the caller has just looked up. */
  default int settle(SubscriptionInfo subscription, String member, List<Settlement> settlements) {
    return settle(subscription.name(), member, settlements);
  }

  /**
   * Completes when events may have come for {@code subscription}: a log of one of its topics grew,
   * in this process or (where the store hears other processes: NOTIFY on PostgreSQL, the wake-up
   * poll elsewhere) in another; or after {@code timeout}. Holds no thread, so a server can keep
   * many members' long polls waiting between fetches. It does not check the member in: fetch within
   * the check-in interval.
   *
   * @throws NotFoundException when the subscription does not exist
   */
  java.util.concurrent.CompletableFuture<Void> awaitEvents(String subscription, Duration timeout);

  /**
   * Completes when the log of {@code topic} grows, in this process or (as for {@link #awaitEvents})
   * in another the store hears; or after {@code timeout}. Holds no thread. For following a topic (a
   * tail) without reading its heads on a timer.
   *
   * @throws NotFoundException when the topic does not exist
   */
  java.util.concurrent.CompletableFuture<Void> awaitAppend(TopicName topic, Duration timeout);

  /**
   * Completes when the log of any of {@code topics} grows (as {@link #awaitAppend(TopicName,
   * Duration)}), or after {@code timeout}. A server that already knows a subscription's topics
   * waits with this instead of {@link #awaitEvents}, which looks the subscription up.
   *
   * @throws NotFoundException when a topic does not exist
   */
  java.util.concurrent.CompletableFuture<Void> awaitAppend(
      java.util.Collection<TopicName> topics, Duration timeout);

  /**
   * Whether {@link #awaitAppend} and {@link #awaitEvents} complete for every append, in this
   * process and in every other (the store's wake-ups are on). When false, appends of other
   * processes go unheard, and a follower must also look on a timer.
   */
  default boolean hearsEveryAppend() {
    return false;
  }

  /** Leaves the group at once: its partitions are free for the others. */
  void leave(String subscription, String member);

  /**
   * Checks in, together, members of the subscription's group that wait on this process for events:
   * one write for all of them (where the coordination store can renew many at once) instead of a
   * fetch each when its check-in falls due. Nothing is written until one of them is into the second
   * half of its check-in interval; then all are renewed together. Only members whose last check-in
   * was here, whose last fetch found nothing to deliver and nothing parked, and whose group has not
   * changed since (no member came or went, no lease waits to be reclaimed, the same policy) are
   * renewed; they keep their leases, and their next fetch reads nothing until a log of the
   * subscription's topics grows or a settlement parks an event. The others check in with their next
   * fetch (a member with parked events sees a retry fall due at its check-ins).
   *
   * @return each renewed member's time until its next check-in is due
   */
  default java.util.Map<String, java.time.Duration> renew(
      SubscriptionInfo subscription, java.util.Collection<String> members) {
    return java.util.Map.of();
  }

  /**
   * What a fetch returns.
   *
   * @param deliveries the events, in order per partition
   * @param partitions the partitions the member holds now
   * @param checkInWithin fetch again within this, or be declared dead after the group's deadline
   */
  record Batch(
      List<Delivery> deliveries, List<TopicPartition> partitions, Duration checkInWithin) {}

  /**
   * One event for the member.
   *
   * @param ackId what {@link #settle} takes back; it names the partition, the lease epoch and the
   *     position
   * @param attempt 1 for a first delivery, more for a retry
   */
  record Delivery(String ackId, Event event, int attempt) {}

  /** What became of a fetched event. */
  enum Outcome {
    /** Handled: the cursor moves past it. */
    DONE,
    /** Failed: try again later (after {@code retryIn}, or the default backoff); its key waits. */
    RETRY,
    /** Give up: dead-lettered with the reason. */
    DEAD
  }

  /**
   * @param ackId from {@link Delivery#ackId}
   * @param outcome what became of it
   * @param retryIn for RETRY: when to try again (null: the default retry policy's backoff)
   * @param reason for RETRY and DEAD: why (kept with the parked event)
   */
  record Settlement(String ackId, Outcome outcome, Duration retryIn, String reason) {
    public static Settlement done(String ackId) {
      return new Settlement(ackId, Outcome.DONE, null, null);
    }
  }
}
