package io.boxline.demo;

import io.boxline.Event;
import io.boxline.EventHandler;
import io.boxline.EventTypes;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The handler of one subscription: records every delivery (with the time the handler was entered)
 * so that the demo can check exactly-once delivery and ordering afterwards.
 *
 * <p>Boxline calls a handler from one thread per partition at a time and hands a partition to the
 * next worker only after the previous batch finished, so the order of this queue is each
 * partition's delivery order.
 */
final class Deliveries implements EventHandler {
  /** One handler call. */
  record Delivery(
      UUID id, int partition, long sequence, String key, OrderPlaced order, long enteredNanos) {}

  private final String subscription;
  private final EventTypes types;
  private final ConcurrentLinkedQueue<Delivery> log = new ConcurrentLinkedQueue<>();
  private final AtomicLong count = new AtomicLong();
  private final AtomicLong lastNanos = new AtomicLong(Long.MIN_VALUE);

  Deliveries(String subscription, EventTypes types) {
    this.subscription = subscription;
    this.types = types;
  }

  @Override
  public void handle(Event event) {
    long entered = System.nanoTime();
    // Decoded with the codec and Java type registered for "order.placed".
    OrderPlaced order = (OrderPlaced) event.payloadAs(types);
    log.add(
        new Delivery(event.id(), event.partition(), event.sequence(), event.key(), order, entered));
    count.incrementAndGet();
    lastNanos.accumulateAndGet(entered, Math::max);
  }

  String subscription() {
    return subscription;
  }

  long count() {
    return count.get();
  }

  /** System.nanoTime() of the latest handler call. */
  long lastNanos() {
    return lastNanos.get();
  }

  /** Every delivery so far, in delivery order per partition. */
  List<Delivery> snapshot() {
    return List.copyOf(log);
  }
}
