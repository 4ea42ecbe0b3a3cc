package io.boxline;

import java.util.List;

/**
 * Find, inspect, redrive and discard dead letters. Redriven events go back to the subscription's
 * retry store with a fresh attempt count and are handled again in their original order per key.
 */
public interface DeadLetters {
  /** Dead letters matching the query, oldest sequence first. */
  List<DeadLetter> list(DeadLetterQuery query);

  /**
   * The subscription's dead letters grouped by the start of their last error, the most common
   * first; at most {@code limit} groups (1 to 1,000).
   */
  List<DeadLetterReason> reasons(String subscription, int limit);

  /** Sends the matching dead letters back for handling; returns how many. */
  int redrive(DeadLetterQuery query);

  /** Deletes the matching dead letters for good (the events stay in the log); returns how many. */
  int discard(DeadLetterQuery query);
}
