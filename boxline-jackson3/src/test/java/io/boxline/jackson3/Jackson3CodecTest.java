package io.boxline.jackson3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Event;
import io.boxline.EventType;
import io.boxline.EventTypes;
import io.boxline.PayloadCodec;
import io.boxline.SerializationException;
import io.boxline.TopicName;
import io.boxline.testing.BoxlineTesting;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@link Jackson3Codec}: records round-trip; bad JSON and bad types fail with a {@link
 * SerializationException} that names the type, the problem and where it is; on the class path it is
 * {@link PayloadCodec#json()}.
 */
class Jackson3CodecTest {
  static final TopicName TOPIC = TopicName.of("acme", "orders");

  public record Line(String productId, int quantity) {}

  public record Order(String id, List<Line> lines, Map<String, String> tags) {}

  static String utf8(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void recordsRoundTrip() {
    Jackson3Codec codec = Jackson3Codec.create();
    Order order =
        new Order("o-1", List.of(new Line("p-1", 2), new Line("p-2", 1)), Map.of("a", "b"));
    byte[] json = codec.encode(order);
    assertThat(utf8(json))
        .isEqualTo(
            "{\"id\":\"o-1\",\"lines\":[{\"productId\":\"p-1\",\"quantity\":2},"
                + "{\"productId\":\"p-2\",\"quantity\":1}],\"tags\":{\"a\":\"b\"}}");
    assertThat(codec.decode(json, Order.class)).isEqualTo(order);
    assertThat(codec.contentType()).isEqualTo("application/json");
  }

  @Test
  void aLocalRecordAndPlainValuesRoundTrip() {
    record Note(String text, Instant at) {}
    Jackson3Codec codec = Jackson3Codec.create();
    assertThat(codec.decode(codec.encode("plain"), String.class)).isEqualTo("plain");
    assertThat(codec.decode(codec.encode(42L), Long.class)).isEqualTo(42L);
    assertThat(codec.decode(codec.encode(new Note("hi", null)), Note.class))
        .isEqualTo(new Note("hi", null));
  }

  @Test
  void aCodecWithItsOwnMapperWritesAndReadsItsOwnFormat() {
    JsonMapper snake =
        JsonMapper.builder().propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE).build();
    Jackson3Codec codec = Jackson3Codec.create(snake);
    byte[] json = codec.encode(new Line("p-9", 3));
    assertThat(utf8(json)).isEqualTo("{\"product_id\":\"p-9\",\"quantity\":3}");
    assertThat(codec.decode(json, Line.class)).isEqualTo(new Line("p-9", 3));
    assertThat(codec).isNotSameAs(Jackson3Codec.create());
    assertThatThrownBy(() -> Jackson3Codec.create(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void javaTimeValuesAreIsoTextAndNumbersAreReadToo() {
    record Note(String text, Instant at) {}
    Jackson3Codec codec = Jackson3Codec.create();
    Note note = new Note("hi", Instant.parse("2026-11-27T18:00:00Z"));
    assertThat(utf8(codec.encode(note)))
        .isEqualTo("{\"text\":\"hi\",\"at\":\"2026-11-27T18:00:00Z\"}");
    // As Jackson 2 with its JavaTimeModule writes it by default: seconds since the epoch.
    assertThat(codec.decode(bytes("{\"text\":\"hi\",\"at\":1795802400.000000000}"), Note.class))
        .isEqualTo(note);
  }

  @Test
  void malformedJsonNamesTheTypeAndWhereItBroke() {
    assertThatThrownBy(
            () -> Jackson3Codec.create().decode(bytes("{\"id\": \"o-1\",\n  oops}"), Order.class))
        .isInstanceOf(SerializationException.class)
        .hasMessageStartingWith("cannot decode JSON payload as " + Order.class.getName() + ": ")
        .hasMessageContaining("Unexpected character ('o'")
        .hasMessageContaining("line 2, column 3");
  }

  @Test
  void aValueOfTheWrongTypeNamesItsPath() {
    String json =
        "{\"id\":\"o-1\",\"lines\":[{\"productId\":\"p\",\"quantity\":1},"
            + "{\"productId\":\"p\",\"quantity\":\"many\"}]}";
    assertThatThrownBy(() -> Jackson3Codec.create().decode(bytes(json), Order.class))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("Cannot deserialize value of type `int` from String \"many\"")
        .hasMessageContaining("(at $.lines[1].quantity, line 1");
  }

  @Test
  void jackson3DefaultsIgnoreUnknownPropertiesAndRefuseAMissingPrimitive() {
    // Unlike Jackson 2's defaults: FAIL_ON_UNKNOWN_PROPERTIES off, FAIL_ON_NULL_FOR_PRIMITIVES on.
    assertThat(
            Jackson3Codec.create()
                .decode(
                    bytes("{\"productId\":\"p\",\"quantity\":1,\"colour\":\"red\"}"), Line.class))
        .isEqualTo(new Line("p", 1));
    assertThatThrownBy(
            () -> Jackson3Codec.create().decode(bytes("{\"productId\":\"p\"}"), Line.class))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("Cannot map `null` into type `int`")
        .hasMessageContaining("(at $.quantity, line 1");
  }

  @Test
  void anUnknownPropertyIsNamedWhenTheMapperRefusesThem() {
    Jackson3Codec strict =
        Jackson3Codec.create(
            JsonMapper.builder()
                .enable(tools.jackson.databind.DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .build());
    assertThatThrownBy(
            () ->
                strict.decode(
                    bytes("{\"productId\":\"p\",\"quantity\":1,\"colour\":\"red\"}"), Line.class))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("\"colour\"")
        .hasMessageContaining("(at $.colour");
  }

  @Test
  void emptyAndNullPayloadsAreRefusedWithAReason() {
    assertThatThrownBy(() -> Jackson3Codec.create().decode(new byte[0], Line.class))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("No content to map due to end-of-input");
    assertThatThrownBy(() -> Jackson3Codec.create().decode(null, Line.class))
        .isInstanceOf(SerializationException.class)
        .hasMessage(
            "cannot decode JSON payload as " + Line.class.getName() + ": the payload is null");
  }

  /** A value whose getter throws: Jackson cannot write it. */
  public static final class Broken {
    public String getState() {
      throw new IllegalStateException("not ready");
    }
  }

  @Test
  void aValueJacksonCannotWriteNamesItsType() {
    assertThatThrownBy(() -> Jackson3Codec.create().encode(new Broken()))
        .isInstanceOf(SerializationException.class)
        .hasMessageStartingWith("cannot encode " + Broken.class.getName() + " as JSON: ")
        .hasMessageContaining("not ready");
  }

  @Test
  void onTheClassPathItIsTheDefaultJsonCodec() {
    assertThat(PayloadCodec.json().contentType()).isEqualTo("application/json");
    Line line = new Line("p-3", 4);
    byte[] json = PayloadCodec.json().encode(line);
    assertThat(json).isEqualTo(Jackson3Codec.create().encode(line));
    Event event =
        new Event(
            UUID.randomUUID(),
            TOPIC,
            0,
            1,
            null,
            "line",
            null,
            "application/json",
            json,
            Map.of(),
            Instant.now(),
            null);
    assertThat(event.payloadAs(Line.class)).isEqualTo(line);
    assertThat(PayloadCodec.json().toString()).contains("Jackson3Codec");
  }

  @Test
  void anInstanceWithEventTypesOnTheDefaultCodecPublishesJson() throws Exception {
    EventTypes types =
        EventTypes.builder().register(EventType.of(Line.class, "line.added", TOPIC)).build();
    try (var boxline = BoxlineTesting.inMemory().eventTypes(types).build().start()) {
      boxline.admin().createNamespace(io.boxline.NamespacePath.of("acme"));
      boxline.admin().createTopic(TOPIC, 1);
      boxline.inTransaction(tx -> boxline.publisher().publish(tx, new Line("p-5", 6)));
      BoxlineTesting.awaitSequenced(boxline, java.time.Duration.ofSeconds(10));
      List<Event> published = BoxlineTesting.published(boxline, TOPIC);
      assertThat(published).hasSize(1);
      assertThat(published.get(0).contentType()).isEqualTo("application/json");
      assertThat(utf8(published.get(0).payload()))
          .isEqualTo("{\"productId\":\"p-5\",\"quantity\":6}");
      assertThat(published.get(0).payloadAs(types)).isEqualTo(new Line("p-5", 6));
    }
  }
}
