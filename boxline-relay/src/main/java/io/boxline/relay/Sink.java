package io.boxline.relay;

import io.boxline.Event;
import java.util.List;

/**
 * Where a {@link Relay} delivers events: a broker, an HTTP endpoint, anything that can confirm that
 * it has taken an event over.
 *
 * <p>The contract the relay relies on:
 *
 * <ul>
 *   <li>{@link #send} delivers the events in list order and returns only once the destination has
 *       confirmed every one of them (a broker acknowledgement, a publisher confirm, a 2xx
 *       response). Returning normally means "all confirmed"; the relay then moves its cursor past
 *       them.
 *   <li>When some events were not confirmed it throws a {@link SinkException} naming them and
 *       saying, per event, whether trying again can help ({@link SinkException.Kind#RETRYABLE}) or
 *       not ({@link SinkException.Kind#PERMANENT}). Events it does not name count as confirmed. A
 *       sink that cannot tell whether a later event overtook an earlier failed one must also name
 *       every event after the first retryable failure, so per-key order survives the resend.
 *   <li>It is called from several relay worker threads at once (one per partition in flight), so it
 *       must be thread-safe. Each call carries events of a single Boxline partition, in sequence
 *       order.
 *   <li>A thread interrupt (the relay shutting down) should end the call promptly, with a retryable
 *       {@link SinkException} when nothing could be confirmed.
 * </ul>
 */
public interface Sink extends AutoCloseable {
  /**
   * Sends {@code events} in order and returns once every one is confirmed.
   *
   * @throws SinkException naming the events that were not confirmed and whether to retry them
   */
  void send(List<Event> events);

  /** A short name for logs and error messages, e.g. {@code kafka} or {@code webhook}. */
  default String name() {
    return getClass().getSimpleName();
  }

  /** Releases connections and threads. The relay calls it once, from {@link Relay#close()}. */
  @Override
  void close();
}
