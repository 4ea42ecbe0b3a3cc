package io.boxline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@link EventType#codec}: the codec registered for a type is the one {@link
 * Event#payloadAs(EventTypes)} decodes with; the default is JSON, found on the class path (core's
 * tests have none, so it names the fix); codecs round-trip. Jackson round trips are in
 * boxline-jackson and boxline-jackson3.
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
  void theDefaultCodecIsJsonAndWithoutACodecModuleItNamesTheFix() {
    EventType<Order> t = EventType.of(Order.class, "order.placed", TOPIC);
    assertThat(t.codec()).isSameAs(PayloadCodec.json());
    assertThat(t.codec().contentType()).isEqualTo("application/json");
    // Core depends on the JDK only: no JSON library, so no codec module on this class path.
    assertThatThrownBy(() -> t.codec().encode(new Order("o-1", 42)))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("encode " + Order.class.getName())
        .hasMessageContaining("io.boxline:boxline-jackson (Jackson 2)")
        .hasMessageContaining("io.boxline:boxline-jackson3 (Jackson 3)")
        .hasMessageContaining("EventType.codec(JacksonCodec.create(objectMapper))");
    assertThatThrownBy(
            () ->
                event("order.placed", "application/json", new byte[] {'{', '}'})
                    .payloadAs(Order.class))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("decode a payload as " + Order.class.getName());
  }

  @Test
  void buildingAnInstanceWhoseEventTypesNeedTheMissingJsonCodecFailsAtOnce() {
    EventTypes types =
        EventTypes.builder()
            .register(EventType.of(Order.class, "order.placed", TOPIC))
            .register(EventType.of(String.class, "note.added", TOPIC).codec(PIPE))
            .build();
    assertThatThrownBy(() -> io.boxline.testing.BoxlineTesting.inMemory().eventTypes(types).build())
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("[order.placed]")
        .hasMessageContaining("boxline-jackson");
    // Types that all have a codec of their own need no codec module.
    EventTypes own =
        EventTypes.builder()
            .register(EventType.of(Order.class, "order.placed", TOPIC).codec(PIPE))
            .build();
    io.boxline.testing.BoxlineTesting.inMemory().eventTypes(own).build().close();
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
    // The JSON default would fail (no JSON codec here): the registered codec is really the one
    // used.
    assertThatThrownBy(() -> event("order.placed", "text/x-pipe", bytes).payloadAs(Order.class))
        .isInstanceOf(RuntimeException.class);
  }

  @Test
  void aNullCodecIsRejected() {
    EventType<Order> t = EventType.of(Order.class, "order.placed", TOPIC);
    assertThatThrownBy(() -> t.codec(null)).isInstanceOf(NullPointerException.class);
  }
}
