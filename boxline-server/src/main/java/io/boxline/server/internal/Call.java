package io.boxline.server.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.boxline.NamespacePath;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * One HTTP request being answered: path parameters, query, body (read in full before the handler
 * runs), caller, and the answer. Exactly one of {@link #send}, {@link #stream} or {@link
 * #notModified} answers it; the router completes the exchange afterwards.
 */
final class Call {
  /** Writes answers ({@link RequestBodies} reads requests). */
  static final ObjectMapper JSON =
      JsonMapper.builder()
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .build();

  final Request request;
  final Response response;
  private final Callback callback;
  final Map<String, String> params;
  final Map<String, String> query;
  final Auth.Caller caller;
  final byte[] bodyBytes;
  private boolean answered;
  private OutputStream stream;
  private Later later;

  /**
   * A handler's step that waits without a thread: once {@code when} completes, {@code next} runs on
   * a worker with this call (see {@link #later}).
   */
  record Later(java.util.concurrent.CompletionStage<?> when, Router.RouteHandler next) {}

  Call(
      Request request,
      Response response,
      Callback callback,
      Map<String, String> params,
      Auth.Caller caller,
      byte[] body) {
    this.request = request;
    this.response = response;
    this.callback = callback;
    this.params = params;
    this.query = parseQuery(request.getHttpURI().getQuery());
    this.caller = caller;
    this.bodyBytes = body == null ? new byte[0] : body;
  }

  String param(String name) {
    return params.get(name);
  }

  /** A request header, or null. */
  String header(String name) {
    return request.getHeaders().get(name);
  }

  void setHeader(String name, String value) {
    response.getHeaders().put(name, value);
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
          "query parameter "
              + name
              + " must be a whole number, got '"
              + Problems.quote(v.get())
              + "'");
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
              + Problems.quote(v.get())
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
        "query parameter "
            + name
            + " must be true or false, got '"
            + Problems.quote(v.get())
            + "'");
  }

  /** The request body as a {@code type}; 400 when it is missing or does not fit. */
  <T> T body(Class<T> type) {
    if (bodyBytes.length == 0) {
      throw ApiException.badRequest("this request needs a JSON body");
    }
    T value = RequestBodies.bind(bodyBytes, type);
    if (value == null) {
      throw ApiException.badRequest("the body must be a JSON object");
    }
    return value;
  }

  /** The body as a {@code type}, or one with every field left out when there is no body. */
  <T> T bodyOrEmpty(Class<T> type) {
    return bodyBytes.length == 0 ? RequestBodies.bind(EMPTY_OBJECT, type) : body(type);
  }

  private static final byte[] EMPTY_OBJECT = {'{', '}'};

  void json(int status, Object value) {
    byte[] bytes;
    try {
      bytes = JSON.writeValueAsBytes(value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("an answer could not be written as JSON", e);
    }
    send(status, "application/json", bytes);
  }

  /**
   * Whether the client has closed its HTTP/1 connection while its request waits. Jetty does not
   * read an HTTP/1 connection while a request is being answered, so a client killed during a long
   * poll goes unnoticed until the answer is written; this reads the connection once, without
   * blocking, to find out. Bytes a client sent meanwhile (a pipelined request) cannot be put back:
   * the connection is then closed after this answer, which such a client sees as a closed
   * connection before its next answer. HTTP/2 streams are always read by Jetty (a failure listener
   * hears their end), so they are not probed.
   */
  boolean peerClosed() {
    var meta = request.getConnectionMetaData();
    if (meta.getHttpVersion() != org.eclipse.jetty.http.HttpVersion.HTTP_1_1
        && meta.getHttpVersion() != org.eclipse.jetty.http.HttpVersion.HTTP_1_0) {
      return false;
    }
    org.eclipse.jetty.io.EndPoint ep = meta.getConnection().getEndPoint();
    if (!ep.isOpen() || ep.isInputShutdown()) {
      return true;
    }
    try {
      ByteBuffer probe = org.eclipse.jetty.util.BufferUtil.allocate(1);
      int n = ep.fill(probe);
      if (n > 0) {
        response.getHeaders().put("Connection", "close");
      }
      return n < 0;
    } catch (IOException e) {
      return true;
    }
  }

  boolean answered() {
    return answered;
  }

  /**
   * Answers later: the handler returns without an answer, and {@code next} runs on a worker once
   * {@code when} completes (normally or not), holding no thread meanwhile. {@code next} answers, or
   * waits again the same way.
   */
  void later(java.util.concurrent.CompletionStage<?> when, Router.RouteHandler next) {
    if ((answered && stream == null) || later != null) {
      throw new IllegalStateException("a call answers (or streams), or waits once at a time");
    }
    later = new Later(when, next);
  }

  /** The wait the handler asked for, now taken (null when it answered). */
  Later takeLater() {
    Later l = later;
    later = null;
    return l;
  }

  void send(int status, String contentType, byte[] bytes) {
    answered = true;
    response.setStatus(status);
    if (status != 204 && status != 304) {
      response.getHeaders().put("Content-Type", contentType);
    }
    if (!response.getHeaders().contains("Cache-Control")) {
      response.getHeaders().put("Cache-Control", "no-store");
    }
    if (status == 204 || status == 304) {
      response.write(true, null, callback);
    } else {
      response.getHeaders().put("Content-Length", Long.toString(bytes.length));
      response.write(true, ByteBuffer.wrap(bytes), callback);
    }
  }

  /**
   * Upgrades the exchange to a WebSocket whose endpoint {@code creator} makes; false (and nothing
   * answered) when the request is not a WebSocket upgrade.
   */
  boolean upgrade(
      org.eclipse.jetty.websocket.server.ServerWebSocketContainer container,
      org.eclipse.jetty.websocket.server.WebSocketCreator creator) {
    boolean upgraded = container.upgrade(creator, request, response, callback);
    answered = upgraded;
    return upgraded;
  }

  /** 304: the client's copy is current. */
  void notModified() {
    send(304, null, null);
  }

  /**
   * Starts a streamed 200 answer (server-sent events); writes block until sent. The router closes
   * the stream and completes the exchange when the handler returns.
   */
  OutputStream stream(String contentType) {
    answered = true;
    response.setStatus(200);
    response.getHeaders().put("Content-Type", contentType);
    response.getHeaders().put("Cache-Control", "no-store");
    stream = Content.Sink.asOutputStream(response);
    return stream;
  }

  /** Completes a streamed answer (a no-op for the others, which complete when written). */
  void finishStream() {
    if (stream == null) {
      return;
    }
    try {
      stream.close();
      callback.succeeded();
    } catch (IOException e) {
      callback.failed(e);
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
