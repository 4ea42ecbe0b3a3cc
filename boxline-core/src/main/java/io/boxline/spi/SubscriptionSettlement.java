package io.boxline.spi;

import java.util.Objects;

/**
 * A {@link Settlement} of one subscription, for {@link CursorStore#settleAcross}: the consumers of
 * one instance commit their cursor moves together.
 */
public record SubscriptionSettlement(long subscriptionId, Settlement settlement) {
  public SubscriptionSettlement {
    Objects.requireNonNull(settlement, "settlement");
  }
}
