package io.boxline.sample;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import java.util.UUID;

/** Written by {@link ShippingListener}, once per order. */
@Entity
public class Shipment {
  @Id
  @GeneratedValue(strategy = GenerationType.IDENTITY)
  private Long id;

  @Column(unique = true)
  private long orderId;

  /** The {@code order.placed} event it was created from. */
  private UUID eventId;

  protected Shipment() {}

  public Shipment(long orderId, UUID eventId) {
    this.orderId = orderId;
    this.eventId = eventId;
  }

  public long getOrderId() {
    return orderId;
  }
}
