package io.boxline.bench;

import io.boxline.OutgoingEvent;
import io.boxline.TopicName;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.UUID;

/** Pre-built 200-byte JSON payloads (built before timing starts) and event ids. */
final class Payloads {
  static final int SIZE = 200;
  static final int COUNT = 1024;

  /**
   * Most significant bits of every benchmark event id; the least significant bits hold its index.
   */
  static final long ID_MAGIC = 0x0B0C5B3E_0000_4000L;

  /** The header that carries the index of an event published through SQL publish(). */
  static final String INDEX_HEADER = "bench-index";

  private static final byte[][] PAYLOADS = build();

  private Payloads() {}

  static byte[] payload(long index) {
    return PAYLOADS[(int) (index % COUNT)];
  }

  static UUID id(long index) {
    return new UUID(ID_MAGIC, index);
  }

  /** The index carried by a benchmark event id, or -1 when the id is not one of ours. */
  static long index(UUID id) {
    return id.getMostSignificantBits() == ID_MAGIC ? id.getLeastSignificantBits() : -1;
  }

  /** Event {@code index} of the W workloads and the soak: an "order.placed" with its payload. */
  static OutgoingEvent event(TopicName topic, long index, String key) {
    return event(topic, id(index), "order.placed", key, payload(index));
  }

  /** A JSON event of every workload. */
  static OutgoingEvent event(TopicName topic, UUID id, String type, String key, byte[] json) {
    return OutgoingEvent.builder(topic)
        .id(id)
        .type(type)
        .key(key)
        .contentType("application/json")
        .payload(json)
        .build();
  }

  /** The key of event {@code index} when events go to {@code keys} keys at random (W2). */
  static String randomKey(long index, int keys) {
    return "customer-" + new SplittableRandom(index).nextInt(keys);
  }

  /** Orders of exactly {@link #SIZE} bytes, a little different each. */
  private static byte[][] build() {
    byte[][] out = new byte[COUNT][];
    for (int i = 0; i < COUNT; i++) {
      String json =
          String.format(
              "{\"orderId\":\"ord-%08d\",\"customerId\":\"cust-%05d\",\"amountCents\":%d,"
                  + "\"currency\":\"EUR\",\"status\":\"PLACED\",\"note\":\"",
              i * 7919, i % 977, 1000 + (i * 37) % 90000);
      out[i] =
          (json + "x".repeat(SIZE - 2 - json.length()) + "\"}").getBytes(StandardCharsets.UTF_8);
    }
    return out;
  }
}
