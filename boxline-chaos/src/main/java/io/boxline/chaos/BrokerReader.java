package io.boxline.chaos;

import io.nats.client.Connection;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PushSubscribeOptions;
import io.nats.client.impl.Headers;
import java.time.Duration;
import java.util.UUID;

/** Reads the whole JetStream stream in stream order and hands each message's event id over. */
final class BrokerReader {
  private BrokerReader() {}

  /** Returns the number of messages read; fails if the stream could not be read to its end. */
  static long readAll(PrivateNats nats, Observations into) throws Exception {
    try (Connection c = nats.connect()) {
      long total =
          c.jetStreamManagement().getStreamInfo(PrivateNats.STREAM).getStreamState().getMsgCount();
      JetStreamSubscription sub =
          c.jetStream()
              .subscribe(
                  PrivateNats.SUBJECTS,
                  PushSubscribeOptions.builder().stream(PrivateNats.STREAM).ordered(true).build());
      long read = 0;
      while (read < total) {
        Message m = sub.nextMessage(Duration.ofSeconds(10));
        if (m == null) {
          throw new IllegalStateException(
              "the stream stopped after " + read + " of " + total + " messages");
        }
        Headers h = m.getHeaders();
        String id = h == null ? null : h.getFirst("Nats-Msg-Id");
        long seq = m.metaData().streamSequence();
        into.observe(id == null ? new UUID(0, 0) : UUID.fromString(id), seq);
        read++;
      }
      sub.unsubscribe();
      return read;
    }
  }
}
