package io.boxline;

/**
 * What a subscription has set aside: events waiting for their next attempt, events waiting behind
 * an earlier event of their key, and dead letters.
 *
 * @param subscription the subscription's name
 * @param retrying events whose next attempt is scheduled
 * @param waiting events parked behind an earlier event of the same key (they run after it)
 * @param deadLetters events that used up their attempts (until redriven or discarded)
 */
public record FailureCounts(String subscription, long retrying, long waiting, long deadLetters) {

  /** Nothing set aside. */
  public static FailureCounts none(String subscription) {
    return new FailureCounts(subscription, 0, 0, 0);
  }
}
