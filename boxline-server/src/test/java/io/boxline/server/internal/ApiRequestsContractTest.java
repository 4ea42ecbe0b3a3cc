package io.boxline.server.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import io.boxline.server.BoxlineServer;
import java.io.InputStream;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The request records ({@link ApiRequests}) and openapi.json describe the same bodies: every
 * operation with a request body has its record here, and each record's fields are the schema's
 * properties with the same JSON types. A field added to one and not the other fails this test.
 */
class ApiRequestsContractTest {
  private static final JsonNode DOC = load();

  /** Each operation with a JSON request body, and the record the server binds it to. */
  private static final Map<String, Class<?>> BODIES = new LinkedHashMap<>();

  static {
    BODIES.put("post /v1/namespaces", ApiRequests.NewNamespace.class);
    BODIES.put("post /v1/topics", ApiRequests.NewTopic.class);
    BODIES.put("put /v1/topics/{topic}/retention", ApiRequests.Retention.class);
    BODIES.put("post /v1/subscriptions", ApiRequests.NewSubscription.class);
    BODIES.put(
        "put /v1/subscriptions/{subscription}/group-policy", ApiRequests.GroupPolicyBody.class);
    BODIES.put("put /v1/group-policy", ApiRequests.GroupPolicyBody.class);
    BODIES.put("post /v1/subscriptions/{subscription}/rewind", ApiRequests.Target.class);
    BODIES.put("post /v1/subscriptions/{subscription}/rename", ApiRequests.Target.class);
    BODIES.put(
        "post /v1/subscriptions/{subscription}/dead-letters/redrive",
        ApiRequests.DeadLetterFilter.class);
    BODIES.put(
        "post /v1/subscriptions/{subscription}/dead-letters/discard",
        ApiRequests.DeadLetterFilter.class);
    BODIES.put("post /v1/topics/{topic}/events", ApiRequests.Publish.class);
    BODIES.put(
        "post /v1/subscriptions/{subscription}/members/{member}/fetch", ApiRequests.Fetch.class);
    BODIES.put(
        "post /v1/subscriptions/{subscription}/members/{member}/settle", ApiRequests.Settle.class);
  }

  @Test
  void everyOperationWithABodyHasItsRecord() {
    Set<String> documented = new TreeSet<>();
    for (Iterator<Map.Entry<String, JsonNode>> p = DOC.get("paths").fields(); p.hasNext(); ) {
      Map.Entry<String, JsonNode> path = p.next();
      for (Iterator<Map.Entry<String, JsonNode>> o = path.getValue().fields(); o.hasNext(); ) {
        Map.Entry<String, JsonNode> op = o.next();
        if (op.getValue().has("requestBody")) {
          documented.add(op.getKey() + " " + path.getKey());
        }
      }
    }
    assertThat(documented).isEqualTo(new TreeSet<>(BODIES.keySet()));
  }

  @Test
  void everyRecordHasTheDocumentsFieldsWithTheirTypes() {
    List<String> mismatches = new ArrayList<>();
    BODIES.forEach(
        (op, record) -> {
          String[] mp = op.split(" ", 2);
          JsonNode schema =
              DOC.get("paths")
                  .get(mp[1])
                  .get(mp[0])
                  .get("requestBody")
                  .get("content")
                  .get("application/json")
                  .get("schema");
          compare(op, record, properties(schema), mismatches);
        });
    assertThat(mismatches).isEmpty();
  }

  @Test
  void everyRequestRecordIsTheBodyOfAnOperationOrAWebSocketMessage() {
    Set<Class<?>> used = new java.util.HashSet<>(BODIES.values());
    used.add(ApiRequests.Settlement.class); // the items of settle lists
    for (Class<?> c : ApiRequests.class.getDeclaredClasses()) {
      if (c.isRecord() && !c.getSimpleName().startsWith("Ws")) {
        assertThat(used).as("%s is bound but never documented", c.getSimpleName()).contains(c);
      }
    }
  }

  /** A record's fields against a schema's properties, item types of lists included. */
  private static void compare(
      String where, Class<?> record, Map<String, JsonNode> props, List<String> out) {
    Map<String, Type> fields = new TreeMap<>();
    Set<String> anyJson = new TreeSet<>();
    for (RecordComponent c : record.getRecordComponents()) {
      fields.put(c.getName(), c.getGenericType());
      if (c.getAccessor().isAnnotationPresent(JsonDeserialize.class)) {
        anyJson.add(c.getName()); // bound by a deserializer of its own: any JSON value
      }
    }
    if (!fields.keySet().equals(props.keySet())) {
      out.add(
          where
              + ": the record "
              + record.getSimpleName()
              + " has "
              + fields.keySet()
              + ", the document "
              + props.keySet());
      return;
    }
    fields.forEach(
        (name, type) -> {
          JsonNode p = resolve(props.get(name));
          String expected = anyJson.contains(name) ? "any" : jsonType(type);
          String documented = p.path("type").asText("any");
          if (!expected.equals(documented)) {
            out.add(where + ": " + name + " is " + expected + " in the record, " + documented);
          }
          if (type instanceof ParameterizedType pt && List.class == pt.getRawType()) {
            Type item = pt.getActualTypeArguments()[0];
            JsonNode items = resolve(p.get("items"));
            if (item instanceof Class<?> c && c.isRecord()) {
              if (c != record) { // a batch's events are events
                compare(where + " " + name + "[]", c, properties(items), out);
              }
            } else if (!jsonType(item).equals(items.path("type").asText("any"))) {
              out.add(where + ": items of " + name + " differ");
            }
          }
        });
  }

  private static String jsonType(Type t) {
    if (t instanceof ParameterizedType pt) {
      return pt.getRawType() == List.class ? "array" : "object";
    }
    if (t == String.class || t == Duration.class) {
      return "string";
    }
    if (t == Integer.class || t == Long.class) {
      return "integer";
    }
    if (t == Double.class) {
      return "number";
    }
    if (t == Boolean.class) {
      return "boolean";
    }
    return "object";
  }

  /** The properties of a schema: of all alternatives of a oneOf. */
  private static Map<String, JsonNode> properties(JsonNode schema) {
    JsonNode s = resolve(schema);
    Map<String, JsonNode> out = new TreeMap<>();
    if (s.has("oneOf")) {
      s.get("oneOf").forEach(alt -> out.putAll(properties(alt)));
      return out;
    }
    s.path("properties").fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue()));
    return out;
  }

  private static JsonNode resolve(JsonNode schema) {
    JsonNode s = schema;
    while (s != null && s.has("$ref")) {
      String[] parts = s.get("$ref").asText().substring(2).split("/");
      s = DOC;
      for (String part : Arrays.asList(parts)) {
        s = s.get(part);
      }
    }
    return s;
  }

  private static JsonNode load() {
    try (InputStream in = BoxlineServer.class.getResourceAsStream("openapi.json")) {
      return new ObjectMapper().readTree(in);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
