package io.boxline.client;

import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import java.util.List;

/**
 * Publishes through a Boxline server: one {@code POST /v1/topics/{topic}/events} per call, which
 * the server stores in one transaction. Each event's bytes and content type are stored exactly as
 * given (sent as {@code payloadBase64}); its id, key, type, source, headers, idempotency key and
 * delivery time go along.
 */
public interface RemotePublisher {
  /** The most events the server takes per request. */
  int MAX_BATCH = 1000;

  /** Publishes one event. */
  default PublishResult publish(OutgoingEvent event) {
    return publishAll(List.of(event)).get(0);
  }

  /**
   * Publishes {@code events}, all of one topic, in one request: all are stored or none.
   *
   * @return one result per event, in order; {@code duplicate} when its idempotency key was seen
   * @throws io.boxline.ValidationException over {@link #MAX_BATCH} events, or when the server
   *     refuses one (400, 413)
   * @throws IllegalArgumentException when the events name more than one topic
   * @throws io.boxline.NotFoundException when the topic does not exist
   */
  List<PublishResult> publishAll(List<OutgoingEvent> events);
}
