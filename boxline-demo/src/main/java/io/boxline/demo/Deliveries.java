package io.boxline.demo;

import io.boxline.Event;
import io.boxline.EventHandler;
import io.boxline.EventTypes;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the handlers of one subscription were given: every delivery (with the member that handled it
 * and the time the handler was entered) so that the demo can check delivery and ordering
 * afterwards.
 *
 * <p>Boxline calls a handler from one thread per partition at a time and hands a partition to the
 * next worker, or the next member, only after the previous batch finished, so the order of this
 * queue is each partition's delivery order. The one exception is a crashed member: its unfinished
 * batch is delivered again by the member that takes over, after the crash.
 */
final class Deliveries {
  /** One handler call. */
  record Delivery(
      UUID id,
      int partition,
      long sequence,
      String key,
      OrderPlaced order,
      long enteredNanos,
      String member) {}

  private final String subscription;
  private final EventTypes types;
  private final ConcurrentLinkedQueue<Delivery> log = new ConcurrentLinkedQueue<>();
  private final Set<UUID> distinct = ConcurrentHashMap.newKeySet();
  private final AtomicLong count = new AtomicLong();
  private final AtomicLong lastNanos = new AtomicLong(Long.MIN_VALUE);

  Deliveries(String subscription, EventTypes types) {
    this.subscription = subscription;
    this.types = types;
  }

  /** The handler of the consumer (group member) {@code member}. */
  EventHandler handler(String member) {
    return event -> record(member, event);
  }

  private void record(String member, Event event) {
    long entered = System.nanoTime();
    // Decoded with the codec and Java type registered for "order.placed".
    OrderPlaced order = (OrderPlaced) event.payloadAs(types);
    log.add(
        new Delivery(
            event.id(), event.partition(), event.sequence(), event.key(), order, entered, member));
    distinct.add(event.id());
    count.incrementAndGet();
    lastNanos.accumulateAndGet(entered, Math::max);
  }

  String subscription() {
    return subscription;
  }

  /** Handler calls, a redelivered event counted each time. */
  long count() {
    return count.get();
  }

  /** Events handled at least once. */
  long distinctCount() {
    return distinct.size();
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
