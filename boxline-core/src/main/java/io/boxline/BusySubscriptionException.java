package io.boxline;

import java.util.List;

/**
 * An operation that needs a subscription without consumers (such as {@link Admin#rewind}) found
 * live consumers in its group.
 */
public class BusySubscriptionException extends BoxlineException {
  private final String subscription;
  private final List<String> consumers;

  public BusySubscriptionException(String subscription, List<String> consumers, String action) {
    super(
        "cannot "
            + action
            + " subscription '"
            + subscription
            + "' while it has live consumers "
            + consumers
            + ": close them (or let their check-ins expire) and try again");
    this.subscription = subscription;
    this.consumers = List.copyOf(consumers);
  }

  public String subscription() {
    return subscription;
  }

  /** The live consumer ids found. */
  public List<String> consumers() {
    return consumers;
  }
}
