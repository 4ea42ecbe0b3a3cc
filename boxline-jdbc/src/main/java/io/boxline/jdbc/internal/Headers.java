package io.boxline.jdbc.internal;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.boxline.SerializationException;
import java.io.IOException;
import java.util.Map;

/** Headers are stored as a JSON object of strings. */
final class Headers {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final TypeReference<Map<String, String>> TYPE = new TypeReference<>() {};

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

  static Map<String, String> fromJson(String json) {
    if (json == null) {
      return Map.of();
    }
    try {
      return Map.copyOf(MAPPER.readValue(json, TYPE));
    } catch (IOException e) {
      throw new SerializationException(
          "stored headers are not a JSON object of strings: " + json, e);
    }
  }
}
