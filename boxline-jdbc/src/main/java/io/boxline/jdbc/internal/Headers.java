package io.boxline.jdbc.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.boxline.SerializationException;
import io.boxline.spi.StoredEvent;
import java.io.IOException;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Headers are stored as a JSON object of strings. Reading is strict (a number or a nested object is
 * not a header value) but never throws for a row's content: what cannot be decoded is reported as a
 * problem, and the row is delivered as a malformed event (see {@link StoredEvent#malformed}).
 */
final class Headers {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final int MAX_SHOWN = 120;

  private Headers() {}

  static String toJson(Map<String, String> headers) {
    if (headers == null || headers.isEmpty()) {
      return null;
    }
    try {
      return MAPPER.writeValueAsString(headers);
    } catch (IOException e) {
      throw new SerializationException("cannot write headers as JSON", e);
    }
  }

  /** The decoded headers, or an empty map when they cannot be decoded (for views). */
  static Map<String, String> fromJsonOrEmpty(String json) {
    Decoded d = decode(json);
    return d.problem == null ? d.headers : Map.of();
  }

  /** Headers decoded, or what is wrong with them. */
  record Decoded(Map<String, String> headers, String problem) {}

  static Decoded decode(String json) {
    if (json == null) {
      return new Decoded(Map.of(), null);
    }
    JsonNode tree;
    try {
      tree = MAPPER.readTree(json);
    } catch (IOException e) {
      return problem(json, "they are not valid JSON");
    }
    if (tree == null || !tree.isObject()) {
      return problem(json, "they are not a JSON object");
    }
    Map<String, String> headers = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = tree.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> f = it.next();
      if (!f.getValue().isTextual()) {
        return problem(
            json,
            "header '"
                + shorten(f.getKey())
                + "' is "
                + f.getValue().getNodeType().name().toLowerCase(java.util.Locale.ROOT)
                + ", not a string");
      }
      headers.put(f.getKey(), f.getValue().textValue());
    }
    return new Decoded(Map.copyOf(headers), null);
  }

  private static Decoded problem(String json, String what) {
    return new Decoded(Map.of(), "stored headers " + shorten(json) + " cannot be decoded: " + what);
  }

  private static String shorten(String s) {
    return s.length() <= MAX_SHOWN ? s : s.substring(0, MAX_SHOWN - 3) + "...";
  }

  /**
   * An event read from a row. Never throws for the row's content: headers that are not a JSON
   * object of strings, or an empty type, make a malformed event that the consumer dead-letters.
   */
  static StoredEvent storedEvent(
      UUID id,
      long sequence,
      String key,
      String type,
      String source,
      String contentType,
      byte[] payload,
      String headersJson,
      Instant createdAt,
      Instant deliverAt) {
    Decoded h = decode(headersJson);
    String malformed = h.problem;
    if (type == null || type.isBlank()) {
      malformed = "the stored event type is empty";
    }
    return new StoredEvent(
        id,
        sequence,
        key,
        type == null ? "" : type,
        source,
        contentType == null ? "application/octet-stream" : contentType,
        payload == null ? new byte[0] : payload,
        h.headers,
        createdAt,
        deliverAt,
        malformed);
  }
}
