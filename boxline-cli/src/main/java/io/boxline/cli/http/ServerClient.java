package io.boxline.cli.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.boxline.cli.CliException;
import io.boxline.cli.ExitCodes;
import java.io.IOException;
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
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Talks JSON to a Boxline server ({@code boxline-server}) with a bearer token, and turns every
 * failure into a {@link CliException} with the command line's exit code: 400 and 413 are bad usage
 * (2), 401 cannot connect (5), 403 and 409 refused (4), 404 not found (3), anything else failed
 * (1); a server that does not answer is "cannot connect" (5), naming its URL. The token is sent,
 * never printed.
 */
public final class ServerClient {
  static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration REQUEST_TIMEOUT = Duration.ofMinutes(5);

  private final String base;
  private final String token;
  private final HttpClient http;

  /**
   * @param baseUrl the server's base URL, {@code http://} or {@code https://} (a trailing slash is
   *     dropped)
   * @param token the bearer token, or null to send none (a server with {@code auth.disabled})
   */
  public ServerClient(String baseUrl, String token) {
    String b = baseUrl.strip();
    while (b.endsWith("/")) {
      b = b.substring(0, b.length() - 1);
    }
    this.base = b;
    this.token = token == null || token.isBlank() ? null : token.strip();
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1) // the server speaks HTTP/1.1
            .connectTimeout(CONNECT_TIMEOUT)
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
  }

  /** The base URL, as the error messages name it. */
  public String url() {
    return base;
  }

  /** A failed request: the HTTP status (0 when the server did not answer) beside the exit code. */
  public static final class Failure extends CliException {
    private static final long serialVersionUID = 1L;

    /** The HTTP status, or 0 when there was no answer. */
    public final int status;

    Failure(int status, int code, String message) {
      super(code, message);
      this.status = status;
    }
  }

  /**
   * One path segment, encoded: {@code acme/billing/orders} becomes {@code acme%2Fbilling%2Forders}.
   */
  public static String segment(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** A query string from the non-null values, in order: {@code ?a=1&b=x}, or "" for none. */
  public static String query(Map<String, ?> params) {
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
  public static Map<String, Object> of(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }

  public JsonNode get(String path) {
    return send("GET", path, null);
  }

  /** GET, or null when the server answers 404. */
  public JsonNode getOrNull(String path) {
    try {
      return get(path);
    } catch (Failure f) {
      if (f.status == 404) {
        return null;
      }
      throw f;
    }
  }

  public JsonNode post(String path, Object body) {
    return send("POST", path, body);
  }

  public JsonNode put(String path, Object body) {
    return send("PUT", path, body);
  }

  public JsonNode delete(String path) {
    return send("DELETE", path, null);
  }

  /** Sends a request ({@code path} starts with /, encoded) and returns the JSON answer. */
  public JsonNode send(String method, String path, Object body) {
    HttpRequest.Builder rb;
    try {
      rb = HttpRequest.newBuilder(URI.create(base + path)).timeout(REQUEST_TIMEOUT);
    } catch (IllegalArgumentException e) {
      throw new Failure(
          0,
          ExitCodes.CANNOT_CONNECT,
          "'" + base + "' is not a server URL: " + e.getMessage() + " (e.g. http://host:8080)");
    }
    rb.header("Accept", "application/json");
    // The version of the server's API this client is written for; a server that cannot answer it
    // refuses with 400 unsupported_version, naming both.
    rb.header("Boxline-Api", "1.0");
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
      throw new Failure(
          0,
          ExitCodes.CANNOT_CONNECT,
          "cannot connect to "
              + base
              + ": no answer within "
              + CONNECT_TIMEOUT.toSeconds()
              + " s (check --server or BOXLINE_SERVER)");
    } catch (HttpTimeoutException e) {
      throw new Failure(
          0,
          ExitCodes.FAILED,
          "the server "
              + base
              + " did not answer "
              + method
              + " "
              + path
              + " within "
              + REQUEST_TIMEOUT.toMinutes()
              + " min");
    } catch (ConnectException e) {
      throw new Failure(
          0,
          ExitCodes.CANNOT_CONNECT,
          "cannot connect to "
              + base
              + (unresolved(e) ? ": unknown host" : ": connection refused (is the server running?)")
              + " (check --server or BOXLINE_SERVER)");
    } catch (IOException e) {
      throw new Failure(
          0,
          ExitCodes.CANNOT_CONNECT,
          "cannot talk to " + base + ": " + describe(e) + " (check --server or BOXLINE_SERVER)");
    } catch (IllegalArgumentException e) {
      throw new Failure(
          0, ExitCodes.CANNOT_CONNECT, "cannot connect to " + base + ": " + describe(e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Failure(0, ExitCodes.FAILED, "interrupted while waiting for " + base);
    }
    int status = response.statusCode();
    JsonNode json = parse(response.body());
    if (status >= 200 && status < 300) {
      if (json == null) {
        throw new Failure(
            status,
            ExitCodes.FAILED,
            base + " answered " + method + " " + path + " without JSON: is it a Boxline server?");
      }
      return json;
    }
    throw failure(status, json, method, path);
  }

  private Failure failure(int status, JsonNode json, String method, String path) {
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
        return new Failure(
            status,
            ExitCodes.CANNOT_CONNECT,
            token == null
                ? "the server "
                    + base
                    + " needs a token (401): set BOXLINE_TOKEN, or pass --token to type it"
                : "the server "
                    + base
                    + " refused the token (401 unauthorized): "
                    + said
                    + "; check BOXLINE_TOKEN or --token");
      case 403:
        return new Failure(
            status, ExitCodes.REFUSED, "the token may not do this (403 forbidden): " + said);
      case 404:
        return new Failure(status, ExitCodes.NOT_FOUND, said);
      case 400:
      case 413:
        return new Failure(status, ExitCodes.USAGE, said);
      case 409:
        return new Failure(status, ExitCodes.REFUSED, said);
      default:
        return new Failure(
            status, ExitCodes.FAILED, "the server " + base + " answered " + status + ": " + said);
    }
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
