package io.boxline.server.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.exc.InvalidTypeIdException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.type.LogicalType;
import io.boxline.BoxlineException;
import io.boxline.Names;
import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Binds request bodies to the records of {@link ApiRequests}, strictly: unknown fields, values of
 * the wrong JSON type (no number read as text or text as a number), duplicate keys and anything
 * after the value are refused. Every refusal is a 400 whose message names the field by its path in
 * the body ({@code events[2]: "key" must be a string}), the nearest known field for a misspelt one,
 * and never the parser's own wording or a Java type.
 */
final class RequestBodies {
  private RequestBodies() {}

  /** The readers' mapper; also parses WebSocket messages, whose {@code id} is echoed as sent. */
  static final JsonMapper MAPPER = mapper(true);

  /**
   * For publish bodies: a payload may repeat a key (it is stored as sent); the envelope's own keys
   * are checked by {@link Payloads}.
   */
  static final JsonMapper PUBLISH_MAPPER = mapper(false);

  private static final Map<Class<?>, ObjectReader> READERS = new ConcurrentHashMap<>();
  private static final Map<Class<?>, ObjectReader> PUBLISH_READERS = new ConcurrentHashMap<>();

  /** A duration written as config and CLI write it: 500ms, 30s, 5m, 2h, 7d or ISO-8601. */
  private static final class DurationText extends JsonDeserializer<Duration> {
    @Override
    public Duration deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      if (p.currentToken() != JsonToken.VALUE_STRING) {
        return (Duration) ctxt.handleUnexpectedToken(Duration.class, p);
      }
      String text = p.getText();
      try {
        return Names.duration(text);
      } catch (BoxlineException | IllegalArgumentException e) {
        throw new Refused(e.getMessage());
      }
    }
  }

  private static JsonMapper mapper(boolean strictDuplicates) {
    JsonMapper.Builder b =
        JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .withCoercionConfig(
                LogicalType.Textual,
                c ->
                    c.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
            .addModule(
                new SimpleModule("boxline-durations")
                    .addDeserializer(Duration.class, new DurationText()));
    if (strictDuplicates) {
      b.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION);
    }
    JsonMapper m = b.build();
    if (strictDuplicates) {
      // Request bodies deeper than this are refused (400), not parsed recursively. A publish
      // body's payload may be deeper (Jackson's default bound): it is stored, not parsed.
      m.getFactory()
          .setStreamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(200).build());
    }
    return m;
  }

  /** A value a deserializer refused with a message of its own (it names the fix). */
  private static final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Refused(String message) {
      super(message, null, false, false);
    }
  }

  /** {@code bytes} as a {@code type}; 400 naming the field for anything amiss. */
  static <T> T bind(byte[] bytes, Class<T> type) {
    return read(READERS.computeIfAbsent(type, MAPPER::readerFor), bytes);
  }

  /** {@link #bind} for publish bodies (a payload may repeat a key). */
  static <T> T bindPublish(byte[] bytes, Class<T> type) {
    return read(PUBLISH_READERS.computeIfAbsent(type, PUBLISH_MAPPER::readerFor), bytes);
  }

  /** An already parsed message (a WebSocket message whose id was read first) as a {@code type}. */
  static <T> T bind(JsonNode tree, Class<T> type) {
    try {
      return READERS.computeIfAbsent(type, MAPPER::readerFor).readValue(tree);
    } catch (IOException | RuntimeException e) {
      throw refusal(e);
    }
  }

  /** A JSON object; 400 when the text is not JSON or not an object. */
  static JsonNode tree(byte[] bytes) {
    JsonNode node;
    try {
      node = MAPPER.readTree(bytes);
    } catch (IOException | RuntimeException e) {
      throw refusal(e);
    }
    if (node == null || node.isMissingNode()) {
      throw ApiException.badRequest("this request needs a JSON body");
    }
    if (!node.isObject()) {
      throw ApiException.badRequest("the body must be a JSON object");
    }
    return node;
  }

  private static <T> T read(ObjectReader reader, byte[] bytes) {
    try {
      return reader.readValue(bytes);
    } catch (IOException | RuntimeException e) {
      throw refusal(e);
    }
  }

  private static RuntimeException refusal(Throwable e) {
    if (e instanceof ValueInstantiationException v && v.getCause() != null) {
      e = v.getCause();
    }
    if (e instanceof ApiException a) {
      return a;
    }
    if (e instanceof JsonMappingException m && m.getCause() instanceof Refused r) {
      return ApiException.badRequest(where(m.getPath()) + ": " + r.getMessage());
    }
    if (e instanceof Refused r) {
      return ApiException.badRequest(r.getMessage());
    }
    if (e instanceof UnrecognizedPropertyException u) {
      return unknownField(u);
    }
    if (e instanceof InvalidTypeIdException t) {
      return ApiException.badRequest(
          at(t.getPath(), false)
              + (t.getTypeId() == null
                  ? "a message needs \"op\": fetch, settle or leave"
                  : "op must be fetch, settle or leave, got '"
                      + Problems.quote(t.getTypeId())
                      + "'"));
    }
    if (e instanceof MismatchedInputException m) {
      List<JsonMappingException.Reference> path = m.getPath();
      if (path.isEmpty() && m.getOriginalMessage().startsWith("Trailing token")) {
        return ApiException.badRequest("the body is not valid JSON: " + Problems.jsonError(m));
      }
      if (path.isEmpty()) {
        return ApiException.badRequest(
            m.getTargetType() != null && m.getTargetType().isRecord()
                ? "the body must be a JSON object"
                : "the body is not what this request takes");
      }
      return ApiException.badRequest(where(path) + " must be " + expected(m.getTargetType()));
    }
    if (e instanceof JsonMappingException m
        && m.getCause() instanceof InputCoercionException
        && !m.getPath().isEmpty()) {
      return ApiException.badRequest(where(m.getPath()) + " is out of range");
    }
    if (e instanceof InputCoercionException c && c.getProcessor() != null) {
      String name = c.getProcessor().getParsingContext().getCurrentName();
      return ApiException.badRequest(
          (name == null ? "a number" : "\"" + name + "\"") + " is out of range");
    }
    if (e instanceof JsonProcessingException j) {
      return ApiException.badRequest("the body is not valid JSON: " + Problems.jsonError(j));
    }
    if (e instanceof IOException) {
      return ApiException.badRequest("the body could not be read");
    }
    return e instanceof RuntimeException r ? r : new IllegalStateException(e);
  }

  private static ApiException unknownField(UnrecognizedPropertyException u) {
    Set<String> known =
        u.getKnownPropertyIds() == null
            ? Set.of()
            : u.getKnownPropertyIds().stream()
                .map(String::valueOf)
                .collect(Collectors.toCollection(TreeSet::new));
    String near = ConfigNames.nearest(u.getPropertyName(), known);
    return ApiException.badRequest(
        at(u.getPath(), true)
            + "unknown field '"
            + Problems.quote(u.getPropertyName())
            + "'"
            + (near == null ? "" : "; did you mean '" + near + "'?")
            + " Known fields: "
            + String.join(", ", known));
  }

  /**
   * Where in the body the object holding the last step of {@code path} is, as a message prefix:
   * {@code "events[2]: "}, or "" for the body itself.
   *
   * @param dropLast whether the last step names the field itself (not the object)
   */
  private static String at(List<JsonMappingException.Reference> path, boolean dropLast) {
    StringBuilder b = new StringBuilder();
    int end = dropLast ? path.size() - 1 : path.size();
    for (int i = 0; i < end; i++) {
      JsonMappingException.Reference r = path.get(i);
      if (r.getFieldName() != null) {
        b.append(b.length() == 0 ? "" : ".").append(r.getFieldName());
      } else if (r.getIndex() >= 0) {
        b.append('[').append(r.getIndex()).append(']');
      }
    }
    return b.length() == 0 ? "" : b + ": ";
  }

  /**
   * The value at {@code path} for a message: {@code events[2]: "key"}, {@code "topics[1]"}, or
   * {@code "name"} for a field of the body itself.
   */
  private static String where(List<JsonMappingException.Reference> path) {
    int last = path.size() - 1;
    if (path.get(last).getFieldName() != null) {
      return at(path, true) + "\"" + path.get(last).getFieldName() + "\"";
    }
    // An item of a list: named with its list.
    String list = last > 0 ? path.get(last - 1).getFieldName() : null;
    return at(path.subList(0, Math.max(last - 1, 0)), false)
        + "\""
        + (list == null ? "" : list)
        + "["
        + path.get(last).getIndex()
        + "]\"";
  }

  private static String expected(Class<?> type) {
    if (type == null) {
      return "of another type";
    }
    if (type == String.class) {
      return "a string";
    }
    if (type == Integer.class || type == int.class || type == Long.class || type == long.class) {
      return "a whole number";
    }
    if (type == Double.class || type == double.class) {
      return "a number";
    }
    if (type == Boolean.class || type == boolean.class) {
      return "true or false";
    }
    if (type == Duration.class) {
      return "a duration such as 500ms, 30s or 5m";
    }
    if (Collection.class.isAssignableFrom(type)) {
      return "a list";
    }
    if (Map.class.isAssignableFrom(type)) {
      return "an object of strings";
    }
    return "an object";
  }
}
