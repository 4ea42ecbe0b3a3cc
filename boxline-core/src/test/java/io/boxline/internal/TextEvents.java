package io.boxline.internal;

import io.boxline.Boxline;
import io.boxline.OutgoingEvent;
import io.boxline.TopicName;
import java.nio.charset.StandardCharsets;

/** The events the unit tests here publish: text, type {@code order.placed}, one per transaction. */
final class TextEvents {
  private TextEvents() {}

  static void publish(Boxline boxline, TopicName topic, String key, String body) {
    boxline.inTransaction(
        tx ->
            boxline
                .publisher()
                .publish(
                    tx,
                    OutgoingEvent.builder(topic)
                        .type("order.placed")
                        .key(key)
                        .contentType("text/plain")
                        .payload(body.getBytes(StandardCharsets.UTF_8))
                        .build()));
  }
}
