package io.boxline.spi;

import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The store's role for events a subscription set aside: retries waiting for their next attempt and
 * dead letters. Consumers park events with the cursor move ({@link CursorStore#settle}); this role
 * finds them again, records later attempts and serves the dead-letter operations.
 */
public interface ParkingStore {

  /**
   * Keys with parked events and the next due time. With {@code deadBlocks}, a dead-lettered event
   * keeps blocking its key until it is redriven or discarded.
   */
  ParkedSummary parked(long subscriptionId, PartitionKey partition, boolean deadBlocks);

  /**
   * The oldest parked event of each key (each keyless one on its own) whose next attempt is due at
   * {@code now}, oldest first. {@code now} is the consumer's clock ({@code Boxline.Builder.clock}),
   * the clock the next attempt times were computed with.
   */
  List<ParkedEvent> dueParked(
      long subscriptionId, PartitionKey partition, boolean deadBlocks, Instant now, int limit);

  /**
   * Records the outcomes of several attempts (by sequence) in one transaction, if {@code epoch}
   * still matches; false when fenced (then none is recorded).
   */
  boolean resolveParked(
      long subscriptionId, PartitionKey partition, long epoch, Map<Long, Resolution> outcomes);

  /** Records one attempt's outcome, if {@code epoch} still matches; false when fenced. */
  default boolean resolveParked(
      long subscriptionId, PartitionKey partition, long seq, long epoch, Resolution resolution) {
    return resolveParked(subscriptionId, partition, epoch, Map.of(seq, resolution));
  }

  /**
   * Up to {@code limit} of the subscription's parked events that are not dead (due for a retry, or
   * behind their key), in log order (topic id, partition, sequence), past {@code after} when it is
   * not null.
   */
  List<io.boxline.RetryingEvent> retrying(
      long subscriptionId, String subscription, io.boxline.EventPosition after, int limit);

  /** What each subscription with parked events has set aside, by subscription name. */
  List<io.boxline.FailureCounts> failureCounts();

  List<DeadLetter> deadLetters(long subscriptionId, DeadLetterQuery query);

  /**
   * The subscription's dead letters grouped by the first {@link
   * io.boxline.DeadLetterReason#MAX_LENGTH} characters of their last error (an empty reason for
   * none), largest group first, then by reason; at most {@code limit} groups.
   */
  List<io.boxline.DeadLetterReason> deadLetterReasons(long subscriptionId, int limit);

  /** Dead letters back to the retry store with a fresh attempt count; wakes consumers. */
  int redriveDeadLetters(long subscriptionId, DeadLetterQuery query);

  int discardDeadLetters(long subscriptionId, DeadLetterQuery query);
}
