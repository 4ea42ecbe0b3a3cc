package io.boxline.sample;

import java.math.BigDecimal;

/** Published when an order is placed. */
public record OrderPlaced(long orderId, String customer, BigDecimal amount) {}
