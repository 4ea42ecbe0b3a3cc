package io.boxline.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.dialect.Dialects;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The server's OpenAPI document as a contract the tests hold every answer to: the route and method
 * must be described, the status listed for that operation (or among the document's {@code
 * x-server-wide-responses}, the answers any request may get), and a JSON body must match the
 * status's schema. Checked strictly: an object schema that lists its properties refuses any other
 * (as if {@code additionalProperties} were false), so a field the server adds without describing it
 * fails the test that received it.
 */
final class ApiContract {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String DOCUMENT = "https://boxline.invalid/openapi.json";

  /** The document the server serves, loaded once for the whole test run. */
  static final ApiContract SERVED = load();

  private final JsonNode doc;
  private final SchemaRegistry registry;
  private final List<Route> routes = new ArrayList<>();
  private final Map<String, Schema> schemas = new ConcurrentHashMap<>();

  private record Route(String template, Pattern pattern, int literals) {}

  private ApiContract(JsonNode doc) {
    this.doc = doc;
    String strict;
    try {
      strict = JSON.writeValueAsString(strict(doc.deepCopy()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    this.registry =
        SchemaRegistry.withDialect(
            Dialects.getOpenApi30(), b -> b.schemas(Map.of(DOCUMENT, strict)));
    doc.get("paths")
        .fieldNames()
        .forEachRemaining(
            t -> {
              String regex = "\\Q" + t.replaceAll("\\{[^/}]+}", "\\\\E[^/]+\\\\Q") + "\\E";
              routes.add(
                  new Route(t, Pattern.compile(regex), t.replaceAll("\\{[^/}]+}", "").length()));
            });
    routes.sort(Comparator.comparingInt(Route::literals).reversed());
  }

  private static ApiContract load() {
    try (InputStream in = BoxlineServer.class.getResourceAsStream("openapi.json")) {
      if (in == null) {
        throw new AssertionError("io/boxline/server/openapi.json is not on the class path");
      }
      return new ApiContract(JSON.readTree(in));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Checks one answer to a request without a body (or whose body is not checked). */
  void check(String method, String target, int status, String contentType, String body) {
    check(method, target, null, status, contentType, body);
  }

  /**
   * Checks one exchange; throws an {@link AssertionError} naming the request, the status and what
   * the document lacks or the body breaks. A request the server accepted (2xx) with a JSON body
   * must match the operation's {@code requestBody} too: a field the server takes without its being
   * described fails as an undescribed answer field does.
   *
   * <p>With the environment variable {@code BOXLINE_CONTRACT_REPORT} set to a file, mismatches are
   * appended there instead of failing, so that one run of the suite lists all of them.
   *
   * @param target the request's path and query, as sent (percent-encoded)
   * @param requestBody the JSON the request sent, or null
   * @param contentType the answer's {@code Content-Type}, or null
   */
  void check(
      String method,
      String target,
      String requestBody,
      int status,
      String contentType,
      String body) {
    try {
      checkExchange(method, target, requestBody, status, contentType, body);
    } catch (AssertionError e) {
      String report = System.getenv("BOXLINE_CONTRACT_REPORT");
      if (report == null) {
        throw e;
      }
      try {
        java.nio.file.Files.writeString(
            java.nio.file.Path.of(report),
            e.getMessage().lines().limit(6).reduce("", (a, b) -> a + b + "\n") + "----\n",
            java.nio.file.StandardOpenOption.CREATE,
            java.nio.file.StandardOpenOption.APPEND);
      } catch (IOException io) {
        throw new UncheckedIOException(io);
      }
    }
  }

  private void checkExchange(
      String method,
      String target,
      String requestBody,
      int status,
      String contentType,
      String body) {
    String path = target.indexOf('?') < 0 ? target : target.substring(0, target.indexOf('?'));
    String request = method + " " + target + " → " + status;
    JsonNode response;
    String where = null;
    JsonNode operation = null;
    for (Route r : routes) {
      if (r.pattern.matcher(path).matches()) {
        operation = doc.get("paths").get(r.template).get(method.toLowerCase(Locale.ROOT));
        if (operation != null) {
          where = "/paths/" + pointer(r.template) + "/" + method.toLowerCase(Locale.ROOT);
          break;
        }
      }
    }
    if (operation != null
        && status / 100 == 2
        && requestBody != null
        && operation.path("requestBody").path("content").has("application/json")) {
      validate(
          request + ", its request body,",
          where + "/requestBody/content/application~1json/schema",
          requestBody);
    }
    String code = Integer.toString(status);
    if (operation != null && operation.get("responses").has(code)) {
      response = operation.get("responses").get(code);
      where += "/responses/" + code;
    } else if (doc.path("x-server-wide-responses").has(code)) {
      response = doc.get("x-server-wide-responses").get(code);
      where = "/x-server-wide-responses/" + code;
    } else {
      throw new AssertionError(
          request
              + ": "
              + (operation == null
                  ? "the API description has no operation " + method + " for this path"
                  : "the API description does not list status " + code + " for this operation")
              + "\n"
              + body);
    }
    if (response.has("$ref")) {
      where = response.get("$ref").asText().substring(1);
      response = doc.at(where);
    }
    if (contentType == null || !contentType.startsWith("application/json") || body.isEmpty()) {
      return;
    }
    if (!response.path("content").has("application/json")) {
      throw new AssertionError(
          request + ": a JSON body the API description does not describe (" + where + ")\n" + body);
    }
    validate(request, where + "/content/application~1json/schema", body);
  }

  private void validate(String what, String pointer, String text) {
    Schema schema =
        schemas.computeIfAbsent(
            pointer, w -> registry.getSchema(SchemaLocation.of(DOCUMENT + "#" + w)));
    JsonNode json;
    try {
      json = JSON.readTree(text);
    } catch (IOException e) {
      throw new AssertionError(what + ": the body is not JSON: " + text, e);
    }
    List<Error> errors = schema.validate(json);
    if (!errors.isEmpty()) {
      StringBuilder m = new StringBuilder(what).append(" does not match ").append(pointer);
      for (Error e : errors) {
        m.append("\n  ").append(e);
      }
      throw new AssertionError(m.append("\n").append(text).toString());
    }
  }

  /**
   * Checks an answer of the JDK's {@code HttpClient} (a text or byte body; a gzipped one is
   * unzipped first) and returns it, so that a call site reads {@code checked(client.send(…))}.
   */
  static <T> java.net.http.HttpResponse<T> checked(java.net.http.HttpResponse<T> r) {
    String body;
    if (r.body() instanceof String text) {
      body = text;
    } else if (r.body() instanceof byte[] bytes) {
      boolean gzip =
          r.headers().firstValue("Content-Encoding").map(e -> e.equals("gzip")).orElse(false);
      try {
        body =
            new String(
                gzip
                    ? new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(bytes))
                        .readAllBytes()
                    : bytes,
                java.nio.charset.StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    } else {
      body = "";
    }
    java.net.URI uri = r.request().uri();
    SERVED.check(
        r.request().method(),
        uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery()),
        r.statusCode(),
        r.headers().firstValue("Content-Type").orElse(null),
        body);
    return r;
  }

  private static String pointer(String s) {
    return s.replace("~", "~0").replace("/", "~1");
  }

  /**
   * The document with every described object closed to other properties; an {@code allOf} of object
   * schemas is merged into one first (closing each part would refuse the others' fields).
   */
  private static JsonNode strict(JsonNode doc) {
    close(doc, doc);
    return doc;
  }

  private static void close(JsonNode node, JsonNode doc) {
    if (node instanceof ObjectNode o) {
      if (o.has("allOf")) {
        merge(o, doc);
      }
      if (o.has("properties") && !o.has("additionalProperties")) {
        o.put("additionalProperties", false);
      }
      for (Iterator<JsonNode> it = o.elements(); it.hasNext(); ) {
        close(it.next(), doc);
      }
    } else if (node instanceof ArrayNode a) {
      for (JsonNode n : a) {
        close(n, doc);
      }
    }
  }

  private static void merge(ObjectNode o, JsonNode doc) {
    ObjectNode properties = JSON.createObjectNode();
    ArrayNode required = JSON.createArrayNode();
    for (JsonNode part : o.get("allOf")) {
      JsonNode p = part.has("$ref") ? doc.at(part.get("$ref").asText().substring(1)) : part;
      if (p.has("allOf")) {
        ObjectNode copy = p.deepCopy();
        merge(copy, doc);
        p = copy;
      }
      p.path("properties").fields().forEachRemaining(f -> properties.set(f.getKey(), f.getValue()));
      p.path("required").forEach(required::add);
    }
    o.remove("allOf");
    o.put("type", "object");
    o.set("properties", properties);
    o.set("required", required);
  }
}
