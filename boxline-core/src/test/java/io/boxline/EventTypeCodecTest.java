package io.boxline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@link EventType#codec}: the codec registered for a type is the one {@link
 * Event#payloadAs(EventTypes)} decodes with; the default is JSON; codecs round-trip.
 */
class EventTypeCodecTest {
  static final TopicName TOPIC = TopicName.of("acme", "orders");

  public record Order(String id, int amount) {}

  /** A codec that is not JSON: {@code id|amount} as text. */
  static final PayloadCodec PIPE =
      new PayloadCodec() {
        @Override
        public String contentType() {
          return "text/x-pipe";
        }

        @Override
        public byte[] encode(Object value) {
          Order o = (Order) value;
          return (o.id() + "|" + o.amount()).getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public <T> T decode(byte[] payload, Class<T> type) {
          String[] parts = new String(payload, StandardCharsets.UTF_8).split("\\|");
          return type.cast(new Order(parts[0], Integer.parseInt(parts[1])));
        }
      };

  private static Event event(String type, String contentType, byte[] payload) {
    return new Event(
        UUID.randomUUID(),
        TOPIC,
        0,
        1,
        null,
        type,
        null,
        contentType,
        payload,
        Map.of(),
        Instant.now(),
        null);
  }

  @Test
  void theDefaultCodecIsJsonAndRoundTrips() {
    EventType<Order> t = EventType.of(Order.class, "order.placed", TOPIC);
    assertThat(t.codec()).isSameAs(PayloadCodec.json());
    assertThat(t.codec().contentType()).isEqualTo("application/json");
    byte[] bytes = t.codec().encode(new Order("o-1", 42));
    assertThat(new String(bytes, StandardCharsets.UTF_8))
        .isEqualTo("{\"id\":\"o-1\",\"amount\":42}");
    assertThat(t.codec().decode(bytes, Order.class)).isEqualTo(new Order("o-1", 42));
  }

  @Test
  void aRegisteredCodecIsTheOneEventsOfItsTypeAreDecodedWith() {
    EventType<Order> t = EventType.of(Order.class, "order.placed", TOPIC).codec(PIPE);
    assertThat(t.codec()).isSameAs(PIPE);
    assertThat(t.key(Order::id).codec()).as("kept by later settings").isSameAs(PIPE);
    EventTypes types = EventTypes.builder().register(t).build();

    byte[] bytes = t.codec().encode(new Order("o-2", 7));
    assertThat(new String(bytes, StandardCharsets.UTF_8)).isEqualTo("o-2|7");
    assertThat(event("order.placed", "text/x-pipe", bytes).payloadAs(types))
        .isEqualTo(new Order("o-2", 7));
    // The JSON default would fail on these bytes: the registered codec is really the one used.
    assertThatThrownBy(() -> event("order.placed", "text/x-pipe", bytes).payloadAs(Order.class))
        .isInstanceOf(RuntimeException.class);
  }

  @Test
  void aJsonCodecWithItsOwnMapperRoundTripsInItsOwnFormat() {
    ObjectMapper snake =
        new ObjectMapper().setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE);
    record Line(String productId, int unitCount) {}
    PayloadCodec codec = PayloadCodec.json(snake);
    byte[] bytes = codec.encode(new Line("p-9", 3));
    assertThat(new String(bytes, StandardCharsets.UTF_8))
        .isEqualTo("{\"product_id\":\"p-9\",\"unit_count\":3}");
    assertThat(codec.decode(bytes, Line.class)).isEqualTo(new Line("p-9", 3));
    assertThat(codec.contentType()).isEqualTo("application/json");
  }

  @Test
  void aNullCodecIsRejected() {
    EventType<Order> t = EventType.of(Order.class, "order.placed", TOPIC);
    assertThatThrownBy(() -> t.codec(null)).isInstanceOf(NullPointerException.class);
  }
}
