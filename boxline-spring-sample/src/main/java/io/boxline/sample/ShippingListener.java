package io.boxline.sample;

import io.boxline.Event;
import io.boxline.spring.BoxlineListener;
import org.springframework.stereotype.Component;

/**
 * Ships placed orders. It runs in the transaction that moves the subscription's cursor: the
 * shipment, the order's new status and the cursor commit together, so each order ships exactly
 * once, even when a call fails and the event is retried.
 */
@Component
public class ShippingListener {
  private final ShipmentRepository shipments;
  private final OrderRepository orders;
  private final Warehouse warehouse;

  ShippingListener(ShipmentRepository shipments, OrderRepository orders, Warehouse warehouse) {
    this.shipments = shipments;
    this.orders = orders;
    this.warehouse = warehouse;
  }

  @BoxlineListener(subscription = "shipping", transactional = true)
  public void ship(OrderPlaced placed, Event event) {
    Shipment shipment = shipments.save(new Shipment(placed.orderId(), event.id()));
    orders.findById(placed.orderId()).ifPresent(Order::shipped);
    warehouse.dispatch(shipment);
  }
}
