package io.boxline.bench;

import io.boxline.Event;
import io.boxline.relay.Sink;
import io.boxline.relay.SinkException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Wraps the sink under test and notes, per event index (carried in the event id, see {@link
 * Payloads#id}), the {@code System.nanoTime()} at which {@link Sink#send} returned with it
 * confirmed: the broker's acknowledgement (Kafka acks=all, RabbitMQ publisher confirm, JetStream
 * ack, HTTP 2xx) as seen by the relay. The first confirmation of an index counts; later ones are
 * counted as duplicates.
 */
final class TimedSink implements Sink {
  private final Sink delegate;
  private final AtomicLongArray confirmed;
  private final AtomicInteger distinct = new AtomicInteger();
  private final LongAdder duplicates = new LongAdder();
  private final LongAdder sends = new LongAdder();
  private final LongAdder failedSends = new LongAdder();
  private final LongAdder foreign = new LongAdder();

  TimedSink(Sink delegate, int events) {
    this.delegate = delegate;
    this.confirmed = new AtomicLongArray(events);
  }

  @Override
  public void send(List<Event> events) {
    sends.increment();
    try {
      delegate.send(events);
    } catch (SinkException e) {
      long now = System.nanoTime();
      failedSends.increment();
      Set<UUID> failed = new HashSet<>();
      for (SinkException.Failure f : e.failures()) {
        failed.add(f.event().id());
      }
      for (Event ev : events) {
        if (!failed.contains(ev.id())) {
          confirm(ev, now);
        }
      }
      throw e;
    }
    long now = System.nanoTime();
    for (Event ev : events) {
      confirm(ev, now);
    }
  }

  private void confirm(Event e, long now) {
    long i = Payloads.index(e.id());
    if (i < 0 || i >= confirmed.length()) {
      foreign.increment();
      return;
    }
    if (confirmed.compareAndSet((int) i, 0, now)) {
      distinct.incrementAndGet();
    } else {
      duplicates.increment();
    }
  }

  /** nanoTime of the first confirmation of event {@code i}, 0 when not confirmed (yet). */
  long confirmedAt(int i) {
    return confirmed.get(i);
  }

  int distinct() {
    return distinct.get();
  }

  long duplicates() {
    return duplicates.sum();
  }

  long sends() {
    return sends.sum();
  }

  long failedSends() {
    return failedSends.sum();
  }

  long foreign() {
    return foreign.sum();
  }

  @Override
  public String name() {
    return delegate.name();
  }

  @Override
  public void close() {
    delegate.close();
  }
}
