package io.boxline.client.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.boxline.NotFoundException;
import io.boxline.PartitionsFencedException;
import io.boxline.TopicName;
import io.boxline.TopicPartition;
import io.boxline.ValidationException;
import io.boxline.client.CannotConnectException;
import io.boxline.client.ConflictException;
import io.boxline.client.ForbiddenException;
import io.boxline.client.ServerException;
import io.boxline.client.UnauthorizedException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Talks JSON to a Boxline server with a bearer token, and turns every failure into Boxline's
 * exceptions: 400 and 413 {@link ValidationException}, 401 {@link UnauthorizedException}, 403
 * {@link ForbiddenException}, 404 {@link NotFoundException}, 409 {@link PartitionsFencedException}
 * (a settle that names refused partitions) or {@link ConflictException}, anything else {@link
 * ServerException}; a server that does not answer is {@link CannotConnectException}, naming its
 * URL. The token is sent, never part of a message.
 */
final class HttpTransport {
  static final ObjectMapper JSON = new ObjectMapper();

  /** The version of the server's API this client is written for. */
  static final String API_VERSION = "1.0";

  private static final String VERSION = version();

  private final String base;
  private final String token;
  private final Duration connectTimeout;
  private final Duration requestTimeout;
  private final String userAgent;
  private final HttpClient http;
  private final AtomicBoolean closed = new AtomicBoolean();

  HttpTransport(
      String baseUrl,
      String token,
      Duration connectTimeout,
      Duration requestTimeout,
      String product) {
    String b = baseUrl.strip();
    while (b.endsWith("/")) {
      b = b.substring(0, b.length() - 1);
    }
    URI uri;
    try {
      uri = URI.create(b + "/v1/whoami");
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "'" + b + "' is not a server URL: " + e.getMessage() + " (e.g. http://host:8080)");
    }
    if (!"http".equalsIgnoreCase(uri.getScheme()) && !"https".equalsIgnoreCase(uri.getScheme())) {
      throw new IllegalArgumentException(
          "'"
              + b
              + "' is not a server URL; it starts with http:// or https://, e.g. http://host:8080");
    }
    if (uri.getHost() == null) {
      throw new IllegalArgumentException(
          "'" + b + "' is not a server URL: it names no host (e.g. http://host:8080)");
    }
    this.base = b;
    this.token = token == null || token.isBlank() ? null : token.strip();
    this.connectTimeout = connectTimeout;
    this.requestTimeout = requestTimeout;
    this.userAgent = (product == null ? "" : product + " ") + "boxline-java/" + VERSION;
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1) // the server speaks HTTP/1.1 (h2c is optional)
            .connectTimeout(connectTimeout)
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
  }

  /** This client's version, from the jar ({@code client.properties}); "development" without. */
  static String version() {
    try (InputStream in = HttpTransport.class.getResourceAsStream("client.properties")) {
      if (in != null) {
        Properties p = new Properties();
        p.load(in);
        String v = p.getProperty("version");
        if (v != null && !v.isBlank() && !v.startsWith("${")) {
          return v.strip();
        }
      }
    } catch (IOException e) {
      // fall through
    }
    return "development";
  }

  /** The base URL, as the error messages name it. */
  String url() {
    return base;
  }

  /** What the client sends as {@code User-Agent}. */
  String userAgent() {
    return userAgent;
  }

  /**
   * One path segment, encoded: {@code acme/billing/orders} becomes {@code acme%2Fbilling%2Forders}.
   */
  static String segment(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** A query string from the non-null values, in order: {@code ?a=1&b=x}, or "" for none. */
  static String query(Map<String, ?> params) {
    StringBuilder sb = new StringBuilder();
    params.forEach(
        (k, v) -> {
          if (v != null) {
            sb.append(sb.length() == 0 ? '?' : '&')
                .append(URLEncoder.encode(k, StandardCharsets.UTF_8))
                .append('=')
                .append(URLEncoder.encode(String.valueOf(v), StandardCharsets.UTF_8));
          }
        });
    return sb.toString();
  }

  /** Key-value pairs in order, for {@link #query} and request bodies. */
  static Map<String, Object> of(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }

  JsonNode get(String path) {
    return send("GET", path, null, requestTimeout);
  }

  /** GET, or null when the server answers 404. */
  JsonNode getOrNull(String path) {
    try {
      return get(path);
    } catch (NotFoundException e) {
      return null;
    }
  }

  JsonNode post(String path, Object body) {
    return send("POST", path, body, requestTimeout);
  }

  /** POST that may take {@code wait} longer than any request (a long poll). */
  JsonNode post(String path, Object body, Duration wait) {
    return send("POST", path, body, requestTimeout.plus(wait));
  }

  JsonNode put(String path, Object body) {
    return send("PUT", path, body, requestTimeout);
  }

  JsonNode delete(String path) {
    return send("DELETE", path, null, requestTimeout);
  }

  /** Sends a request ({@code path} starts with /, encoded) and returns the JSON answer. */
  private JsonNode send(String method, String path, Object body, Duration timeout) {
    if (closed.get()) {
      throw new IllegalStateException("the client of " + base + " is closed");
    }
    HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(base + path)).timeout(timeout);
    rb.header("Accept", "application/json");
    // The version of the server's API this client is written for; a server that cannot answer it
    // refuses with 400 unsupported_version, naming both.
    rb.header("Boxline-Api", API_VERSION);
    rb.header("User-Agent", userAgent);
    if (token != null) {
      rb.header("Authorization", "Bearer " + token);
    }
    if (body == null) {
      rb.method(method, HttpRequest.BodyPublishers.noBody());
    } else {
      byte[] bytes;
      try {
        bytes = JSON.writeValueAsBytes(body);
      } catch (JsonProcessingException e) {
        throw new IllegalStateException("cannot write the request as JSON", e);
      }
      rb.header("Content-Type", "application/json");
      rb.method(method, HttpRequest.BodyPublishers.ofByteArray(bytes));
    }
    HttpResponse<byte[]> response;
    try {
      response = http.send(rb.build(), HttpResponse.BodyHandlers.ofByteArray());
    } catch (HttpConnectTimeoutException e) {
      throw new CannotConnectException(
          "cannot connect to " + base + ": no answer within " + human(connectTimeout), base, e);
    } catch (HttpTimeoutException e) {
      throw new ServerException(
          "the server "
              + base
              + " did not answer "
              + method
              + " "
              + path
              + " within "
              + human(timeout),
          0,
          null,
          base,
          e);
    } catch (ConnectException e) {
      throw new CannotConnectException(
          "cannot connect to "
              + base
              + (unresolved(e)
                  ? ": unknown host"
                  : ": connection refused (is the server running?)"),
          base,
          e);
    } catch (IOException e) {
      throw new CannotConnectException("cannot talk to " + base + ": " + describe(e), base, e);
    } catch (IllegalArgumentException e) {
      throw new CannotConnectException("cannot connect to " + base + ": " + describe(e), base, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServerException("interrupted while waiting for " + base, 0, null, base, e);
    }
    int status = response.statusCode();
    JsonNode json = parse(response.body());
    if (status >= 200 && status < 300) {
      if (json == null) {
        throw new ServerException(
            base + " answered " + method + " " + path + " without JSON: is it a Boxline server?",
            status,
            null,
            base);
      }
      return json;
    }
    throw failure(status, json, method, path);
  }

  private RuntimeException failure(int status, JsonNode json, String method, String path) {
    String code = json != null && json.hasNonNull("error") ? json.get("error").asText() : null;
    String said =
        json != null && json.hasNonNull("message")
            ? json.get("message").asText()
            : "HTTP "
                + status
                + " for "
                + method
                + " "
                + path
                + " (is "
                + base
                + " a Boxline server?)";
    switch (status) {
      case 401:
        return new UnauthorizedException(
            token == null
                ? "the server " + base + " needs a token (401)"
                : "the server " + base + " refused the token (401 unauthorized): " + said,
            code,
            base,
            token != null);
      case 403:
        return new ForbiddenException(
            "the token may not do this (403 forbidden): " + said, code, base);
      case 404:
        return typed(new NotFoundException(said), status, code);
      case 400:
      case 413:
        return typed(new ValidationException(said), status, code);
      case 409:
        if (json != null && json.path("refused").isArray()) {
          List<TopicPartition> refused = new ArrayList<>();
          for (JsonNode p : json.get("refused")) {
            refused.add(
                new TopicPartition(
                    TopicName.parse(p.path("topic").asText()), p.path("partition").asInt()));
          }
          return typed(
              new PartitionsFencedException(said, refused, json.path("settled").asInt()),
              status,
              code);
        }
        return new ConflictException(said, code, base);
      default:
        return new ServerException(
            "the server " + base + " answered " + status + ": " + said, status, code, base);
    }
  }

  /** A core exception with the request's details as its cause. */
  private <T extends RuntimeException> T typed(T e, int status, String code) {
    e.initCause(new ServerException(e.getMessage(), status, code, base));
    return e;
  }

  /**
   * Refuses further requests. On a JDK whose HttpClient can be shut down (21 and newer), its
   * connections close and requests in flight end; on 17 they are released with the client.
   */
  void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      Method shutdown = HttpClient.class.getMethod("shutdownNow");
      shutdown.invoke(http);
    } catch (ReflectiveOperationException | RuntimeException e) {
      // JDK 17 to 20: nothing to shut down
    }
  }

  /** 10 s, 5 min, 1500 ms. */
  static String human(Duration d) {
    if (d.toMillis() % 60_000 == 0) {
      return d.toMinutes() + " min";
    }
    if (d.toMillis() % 1000 == 0) {
      return d.toSeconds() + " s";
    }
    return d.toMillis() + " ms";
  }

  private static JsonNode parse(byte[] body) {
    if (body == null || body.length == 0) {
      return null;
    }
    try {
      JsonNode n = JSON.readTree(body);
      return n == null || n.isMissingNode() ? null : n;
    } catch (IOException e) {
      return null;
    }
  }

  private static boolean unresolved(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof UnresolvedAddressException) {
        return true;
      }
    }
    return false;
  }

  private static String describe(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getMessage() == null) {
      t = t.getCause();
    }
    String m = t.getMessage();
    return m == null ? t.getClass().getSimpleName() : m;
  }
}
