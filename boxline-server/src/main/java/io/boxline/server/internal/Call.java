package io.boxline.server.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import io.boxline.NamespacePath;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** One HTTP request being answered: path parameters, query, body, caller, and the answer. */
final class Call {
  static final ObjectMapper JSON = new ObjectMapper();

  final HttpExchange exchange;
  final Map<String, String> params;
  final Map<String, String> query;
  final Auth.Caller caller;
  private final int maxBodyBytes;
  boolean answered;

  Call(HttpExchange exchange, Map<String, String> params, Auth.Caller caller, int maxBodyBytes) {
    this.exchange = exchange;
    this.params = params;
    this.query = parseQuery(exchange.getRequestURI().getRawQuery());
    this.caller = caller;
    this.maxBodyBytes = maxBodyBytes;
  }

  String param(String name) {
    return params.get(name);
  }

  /** The {@code {topic}} path parameter: a full name such as {@code acme%2Fbilling%2Forders}. */
  TopicName topic() {
    return valid(() -> TopicName.parse(param("topic")));
  }

  NamespacePath namespace() {
    return valid(() -> NamespacePath.of(param("namespace")));
  }

  Optional<String> query(String name) {
    String v = query.get(name);
    return v == null || v.isEmpty() ? Optional.empty() : Optional.of(v);
  }

  int intQuery(String name, int dflt, int min, int max) {
    Optional<String> v = query(name);
    if (v.isEmpty()) {
      return dflt;
    }
    long n;
    try {
      n = Long.parseLong(v.get());
    } catch (NumberFormatException e) {
      throw ApiException.badRequest(
          "query parameter " + name + " must be a whole number, got '" + v.get() + "'");
    }
    if (n < min || n > max) {
      throw ApiException.badRequest(
          "query parameter " + name + " must be between " + min + " and " + max + ", got " + n);
    }
    return (int) n;
  }

  long longQuery(String name, long dflt) {
    Optional<String> v = query(name);
    if (v.isEmpty()) {
      return dflt;
    }
    try {
      long n = Long.parseLong(v.get());
      if (n < 0) {
        throw new NumberFormatException();
      }
      return n;
    } catch (NumberFormatException e) {
      throw ApiException.badRequest(
          "query parameter "
              + name
              + " must be a whole number of 0 or more, got '"
              + v.get()
              + "'");
    }
  }

  boolean boolQuery(String name) {
    Optional<String> v = query(name);
    if (v.isEmpty()) {
      return false;
    }
    if (v.get().equals("true") || v.get().equals("false")) {
      return Boolean.parseBoolean(v.get());
    }
    throw ApiException.badRequest(
        "query parameter " + name + " must be true or false, got '" + v.get() + "'");
  }

  /** The request body as JSON; 413 past the size limit, 400 when it is not JSON. */
  JsonNode body() {
    byte[] bytes = bodyBytes();
    if (bytes.length == 0) {
      throw ApiException.badRequest("this request needs a JSON body");
    }
    try {
      JsonNode node = JSON.readTree(bytes);
      if (node == null) {
        throw ApiException.badRequest("this request needs a JSON body");
      }
      return node;
    } catch (JsonProcessingException e) {
      throw ApiException.badRequest("the body is not valid JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw ApiException.badRequest("the body could not be read: " + e.getMessage());
    }
  }

  JsonNode bodyOrEmpty() {
    byte[] bytes = bodyBytes();
    if (bytes.length == 0) {
      return JSON.createObjectNode();
    }
    try {
      JsonNode node = JSON.readTree(bytes);
      return node == null ? JSON.createObjectNode() : node;
    } catch (IOException e) {
      throw ApiException.badRequest("the body is not valid JSON: " + e.getMessage());
    }
  }

  private byte[] bodyBytes() {
    String length = exchange.getRequestHeaders().getFirst("Content-Length");
    if (length != null) {
      try {
        if (Long.parseLong(length.trim()) > maxBodyBytes) {
          throw tooLarge();
        }
      } catch (NumberFormatException e) {
        throw ApiException.badRequest("Content-Length is not a number");
      }
    }
    try (InputStream in = exchange.getRequestBody()) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] buf = new byte[8192];
      int n;
      while ((n = in.read(buf)) > 0) {
        out.write(buf, 0, n);
        if (out.size() > maxBodyBytes) {
          throw tooLarge();
        }
      }
      return out.toByteArray();
    } catch (IOException e) {
      throw ApiException.badRequest("the body could not be read: " + e.getMessage());
    }
  }

  /**
   * Reads and drops what is left of the body (up to 64 MiB) so the client, still sending, reads the
   * 413 instead of a reset connection; the connection is closed after the answer.
   */
  private ApiException tooLarge() {
    exchange.getResponseHeaders().set("Connection", "close");
    try {
      InputStream in = exchange.getRequestBody();
      byte[] buf = new byte[65536];
      long dropped = 0;
      int n;
      while (dropped < 64L * 1024 * 1024 && (n = in.read(buf)) > 0) {
        dropped += n;
      }
    } catch (IOException e) {
      // The client stopped sending; answer anyway.
    }
    return new ApiException(
        413,
        "too_large",
        "the request body is larger than "
            + maxBodyBytes
            + " bytes (http.maxBodyBytes); send fewer events per request");
  }

  void json(int status, Object value) {
    byte[] bytes;
    try {
      bytes = JSON.writeValueAsBytes(value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    send(status, "application/json", bytes);
  }

  void send(int status, String contentType, byte[] bytes) {
    answered = true;
    exchange.getResponseHeaders().set("Content-Type", contentType);
    if (!exchange.getResponseHeaders().containsKey("Cache-Control")) {
      exchange.getResponseHeaders().set("Cache-Control", "no-store");
    }
    try {
      if (status == 204) {
        exchange.sendResponseHeaders(204, -1);
      } else {
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(bytes);
        }
      }
    } catch (IOException e) {
      // The client went away; nothing to answer.
    }
  }

  static <T> T valid(java.util.function.Supplier<T> s) {
    try {
      return s.get();
    } catch (ValidationException e) {
      throw ApiException.badRequest(e.getMessage());
    }
  }

  private static Map<String, String> parseQuery(String raw) {
    if (raw == null || raw.isEmpty()) {
      return Map.of();
    }
    Map<String, String> out = new HashMap<>();
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      String k = eq < 0 ? pair : pair.substring(0, eq);
      String v = eq < 0 ? "" : pair.substring(eq + 1);
      try {
        out.put(
            URLDecoder.decode(k, StandardCharsets.UTF_8),
            URLDecoder.decode(v, StandardCharsets.UTF_8));
      } catch (IllegalArgumentException e) {
        throw ApiException.badRequest("the query string is not valid URL encoding");
      }
    }
    return out;
  }
}
