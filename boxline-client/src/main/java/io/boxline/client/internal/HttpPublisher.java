package io.boxline.client.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.client.RemotePublisher;
import io.boxline.client.ServerException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Publishes through a Boxline server: one {@code POST /v1/topics/{topic}/events} per batch, which
 * the server stores in one transaction. Each event goes as {@code payloadBase64} with its content
 * type, so the bytes and the content type are stored exactly as given.
 */
final class HttpPublisher implements RemotePublisher {
  private final HttpTransport server;

  HttpPublisher(HttpTransport server) {
    this.server = server;
  }

  @Override
  public List<PublishResult> publishAll(List<OutgoingEvent> events) {
    if (events.isEmpty()) {
      return List.of();
    }
    if (events.size() > MAX_BATCH) {
      throw new ValidationException(
          "a server takes at most " + MAX_BATCH + " events per request; got " + events.size());
    }
    TopicName topic = events.get(0).topic();
    List<Object> items = new ArrayList<>();
    for (OutgoingEvent e : events) {
      if (!e.topic().equals(topic)) {
        throw new IllegalArgumentException("one request publishes to one topic");
      }
      items.add(json(e));
    }
    JsonNode answer = server.post(HttpAdmin.topicPath(topic) + "/events", Map.of("events", items));
    List<PublishResult> out = new ArrayList<>();
    for (JsonNode r : answer.path("results")) {
      out.add(
          new PublishResult(
              UUID.fromString(r.get("id").asText()),
              topic,
              r.get("partition").asInt(),
              r.path("duplicate").asBoolean(false)));
    }
    if (out.size() != events.size()) {
      throw new ServerException(
          "the server answered "
              + out.size()
              + " results for "
              + events.size()
              + " events; is "
              + server.url()
              + " a Boxline server?",
          200,
          null,
          server.url());
    }
    return out;
  }

  static Map<String, Object> json(OutgoingEvent e) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", e.id().toString());
    m.put("type", e.type());
    if (e.key() != null) {
      m.put("key", e.key());
    }
    if (e.source() != null) {
      m.put("source", e.source());
    }
    m.put("contentType", e.contentType());
    m.put("payloadBase64", Base64.getEncoder().encodeToString(e.payload()));
    if (!e.headers().isEmpty()) {
      m.put("headers", e.headers());
    }
    if (e.idempotencyKey() != null) {
      m.put("idempotencyKey", e.idempotencyKey());
    }
    if (e.deliverAt() != null) {
      m.put("deliverAt", e.deliverAt().toString());
    }
    return m;
  }
}
