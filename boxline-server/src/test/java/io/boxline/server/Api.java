package io.boxline.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** A small client of the server's HTTP API for tests. */
final class Api {
  static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  final String base;
  final String token;

  Api(String base, String token) {
    this.base = base;
    this.token = token;
  }

  Api as(String otherToken) {
    return new Api(base, otherToken);
  }

  static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  record Reply(int status, String body) {
    JsonNode json() {
      try {
        return JSON.readTree(body);
      } catch (IOException e) {
        throw new AssertionError("not JSON (status " + status + "): " + body, e);
      }
    }

    @Override
    public String toString() {
      return status + " " + body;
    }
  }

  Reply call(String method, String path, String body) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    if (body != null) {
      b.header("Content-Type", "application/json");
    }
    b.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
    try {
      HttpResponse<String> r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
      ApiContract.SERVED.check(
          method,
          path,
          body,
          r.statusCode(),
          r.headers().firstValue("Content-Type").orElse(null),
          r.body());
      return new Reply(r.statusCode(), r.body());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Every operation of the server's API description, as "METHOD /path". */
  java.util.Set<String> describedRoutes() {
    java.util.Set<String> described = new java.util.HashSet<>();
    get("/openapi.json")
        .json()
        .get("paths")
        .fields()
        .forEachRemaining(
            p ->
                p.getValue()
                    .fieldNames()
                    .forEachRemaining(
                        m -> {
                          if (java.util.Set.of("get", "post", "put", "delete", "patch")
                              .contains(m)) {
                            described.add(m.toUpperCase(java.util.Locale.ROOT) + " " + p.getKey());
                          }
                        }));
    return described;
  }

  /** Every event of a topic's partitions 0 to {@code partitions - 1}, by id, paging through. */
  java.util.Map<String, JsonNode> allEvents(String topicPath, int partitions) {
    java.util.Map<String, JsonNode> out = new java.util.LinkedHashMap<>();
    for (int p = 0; p < partitions; p++) {
      long after = 0;
      while (true) {
        Reply r = get(topicPath + "/partitions/" + p + "/events?limit=1000&after=" + after);
        if (r.status() != 200) {
          throw new AssertionError(r.toString());
        }
        for (JsonNode e : r.json().get("events")) {
          out.put(e.get("id").asText(), e);
          after = e.get("sequence").asLong();
        }
        if (r.json().get("next").isNull()) {
          break;
        }
      }
    }
    return out;
  }

  Reply get(String path) {
    return call("GET", path, null);
  }

  /** A metric's value on /metrics (a gauge or counter without labels). */
  double metric(String name) {
    return get("/metrics")
        .body()
        .lines()
        .filter(l -> l.startsWith(name + " "))
        .mapToDouble(l -> Double.parseDouble(l.substring(name.length() + 1)))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + name + " on /metrics"));
  }

  Reply post(String path, String body) {
    return call("POST", path, body);
  }

  Reply put(String path, String body) {
    return call("PUT", path, body);
  }

  Reply delete(String path) {
    return call("DELETE", path, null);
  }
}
