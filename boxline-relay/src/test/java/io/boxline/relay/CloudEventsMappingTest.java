package io.boxline.relay;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.boxline.Event;
import io.boxline.TopicName;
import io.cloudevents.CloudEvent;
import io.cloudevents.jackson.JsonFormat;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class CloudEventsMappingTest {
  private static final TopicName TOPIC = TopicName.of("acme/shop", "orders");
  private static final Instant CREATED = Instant.parse("2025-03-04T05:06:07.123456Z");
  private static final String TRACEPARENT =
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

  private static Event event(
      String source, String contentType, byte[] payload, Map<String, String> headers) {
    return new Event(
        UUID.fromString("11111111-2222-3333-4444-555555555555"),
        TOPIC,
        3,
        5_000_000_000L,
        "customer-7",
        "order.placed",
        source,
        contentType,
        payload,
        headers,
        CREATED,
        null);
  }

  private static byte[] json(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void mapsEveryAttribute() {
    Event e =
        event(
            "https://shop.example/orders",
            "application/json",
            json("{\"amount\":42}"),
            Map.of("traceparent", TRACEPARENT, "tracestate", "vendor=1", "tenant", "acme"));
    CloudEvent ce = CloudEventsMapping.defaults().toCloudEvent(e);
    assertThat(ce.getSpecVersion().toString()).isEqualTo("1.0");
    assertThat(ce.getId()).isEqualTo("11111111-2222-3333-4444-555555555555");
    assertThat(ce.getSource()).isEqualTo(URI.create("https://shop.example/orders"));
    assertThat(ce.getType()).isEqualTo("order.placed");
    assertThat(ce.getSubject()).isEqualTo("customer-7");
    assertThat(ce.getTime()).isEqualTo(OffsetDateTime.ofInstant(CREATED, ZoneOffset.UTC));
    assertThat(ce.getDataContentType()).isEqualTo("application/json");
    assertThat(ce.getData().toBytes()).isEqualTo(json("{\"amount\":42}"));
    assertThat(ce.getExtension("traceparent")).isEqualTo(TRACEPARENT);
    assertThat(ce.getExtension("tracestate")).isEqualTo("vendor=1");
    assertThat(ce.getExtension("tenant")).isEqualTo("acme");
    assertThat(ce.getExtension("boxlinetopic")).isEqualTo("acme/shop/orders");
    assertThat(ce.getExtension("boxlinepartition")).isEqualTo(3);
    assertThat(ce.getExtension("boxlinesequence")).isEqualTo("5000000000");
  }

  @Test
  void binaryAttributesAreCanonicalStrings() {
    Event e =
        event(
            null,
            "text/plain",
            json("hi"),
            Map.of("Traceparent", TRACEPARENT, "Not-Valid_Name", "x"));
    Map<String, String> attrs = CloudEventsMapping.defaults().binaryAttributes(e);
    assertThat(attrs)
        .containsEntry("specversion", "1.0")
        .containsEntry("id", "11111111-2222-3333-4444-555555555555")
        .containsEntry("source", "/acme/shop/orders")
        .containsEntry("type", "order.placed")
        .containsEntry("subject", "customer-7")
        .containsEntry("time", "2025-03-04T05:06:07.123456Z")
        .containsEntry("traceparent", TRACEPARENT)
        .containsEntry("boxlinetopic", "acme/shop/orders")
        .containsEntry("boxlinepartition", "3")
        .containsEntry("boxlinesequence", "5000000000")
        .doesNotContainKeys("datacontenttype", "data", "not-valid_name");
    assertThat(List.copyOf(attrs.keySet()).subList(0, 4))
        .containsExactly("specversion", "id", "source", "type");
  }

  @Test
  void defaultSourceAndHeaderExtensionsAreConfigurable() {
    CloudEventsMapping mapping =
        CloudEventsMapping.builder()
            .defaultSource(URI.create("urn:acme:shop"))
            .headerExtensions(false)
            .mode(CloudEventsMapping.Mode.STRUCTURED)
            .build();
    Event e = event("not a uri ^", "application/json", json("{}"), Map.of("tenant", "acme"));
    CloudEvent ce = mapping.toCloudEvent(e);
    assertThat(ce.getSource()).isEqualTo(URI.create("urn:acme:shop"));
    assertThat(ce.getExtensionNames()).doesNotContain("tenant");
    assertThat(mapping.mode()).isEqualTo(CloudEventsMapping.Mode.STRUCTURED);
    assertThat(CloudEventsMapping.defaults().mode()).isEqualTo(CloudEventsMapping.Mode.BINARY);
  }

  @Test
  void structuredJsonEmbedsJsonDataAndRoundTrips() throws Exception {
    Event e =
        event(
            null, "application/json", json("{\"amount\":42}"), Map.of("traceparent", TRACEPARENT));
    byte[] doc = CloudEventsMapping.defaults().toJson(e);
    JsonNode node = new ObjectMapper().readTree(doc);
    assertThat(node.get("data").get("amount").asInt()).isEqualTo(42);
    assertThat(node.get("specversion").asText()).isEqualTo("1.0");
    assertThat(node.get("subject").asText()).isEqualTo("customer-7");
    assertThat(node.get("boxlinesequence").asText()).isEqualTo("5000000000");
    CloudEvent back = new JsonFormat().deserialize(doc);
    assertThat(back.getId()).isEqualTo(e.id().toString());
    assertThat(back.getExtension("traceparent")).isEqualTo(TRACEPARENT);
    assertThat(new ObjectMapper().readTree(back.getData().toBytes()).get("amount").asInt())
        .isEqualTo(42);
  }

  @Test
  void nonJsonOrBrokenJsonTravelsAsBase64() throws Exception {
    byte[] bytes = {0, 1, 2, (byte) 0xff};
    JsonNode binary =
        new ObjectMapper()
            .readTree(
                CloudEventsMapping.defaults()
                    .toJson(event(null, "application/octet-stream", bytes, Map.of())));
    assertThat(Base64.getDecoder().decode(binary.get("data_base64").asText())).isEqualTo(bytes);

    byte[] broken = json("{not json");
    byte[] doc =
        CloudEventsMapping.defaults().toJson(event(null, "application/json", broken, Map.of()));
    CloudEvent back = new JsonFormat().deserialize(doc);
    assertThat(back.getData().toBytes()).isEqualTo(broken);
  }

  @Test
  void batchIsAJsonArrayInOrder() throws Exception {
    Event a = event(null, "application/json", json("{\"n\":1}"), Map.of());
    Event b =
        new Event(
            UUID.randomUUID(),
            TOPIC,
            3,
            a.sequence() + 1,
            "customer-7",
            "order.paid",
            null,
            "application/json",
            json("{\"n\":2}"),
            Map.of(),
            CREATED,
            null);
    JsonNode array =
        new ObjectMapper().readTree(CloudEventsMapping.defaults().toJsonBatch(List.of(a, b)));
    assertThat(array.isArray()).isTrue();
    assertThat(array).hasSize(2);
    assertThat(array.get(0).get("type").asText()).isEqualTo("order.placed");
    assertThat(array.get(1).get("data").get("n").asInt()).isEqualTo(2);
  }
}
