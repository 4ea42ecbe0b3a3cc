package io.boxline.jackson3;

import io.boxline.PayloadCodec;
import io.boxline.SerializationException;
import java.util.Objects;
import tools.jackson.core.JacksonException;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * JSON payloads through Jackson 3 ({@code tools.jackson}, as Spring Boot 4 uses; {@code
 * application/json}). Thread-safe.
 *
 * <pre>{@code
 * EventType.of(OrderPlaced.class, "order.placed", ORDERS).codec(Jackson3Codec.create(jsonMapper))
 * TaskSettings.defaults().codec(Jackson3Codec.create(jsonMapper))
 * }</pre>
 *
 * <p>With this module on the class path and no codec set, {@link PayloadCodec#json()} is {@link
 * #create()}. Encoding and decoding failures are {@link SerializationException}s that name the Java
 * type, the problem and, when decoding, where it is in the JSON ({@code $.lines[2].quantity, line
 * 1, column 40}).
 *
 * <p>Jackson 3's defaults differ from Jackson 2's (for example {@code java.time} values are written
 * as ISO-8601 text, not as numbers): events written by {@code boxline-jackson} are read here, but
 * the bytes this codec writes for the same object may differ from Jackson 2's.
 */
public final class Jackson3Codec implements PayloadCodec {
  private static final Jackson3Codec DEFAULT =
      new Jackson3Codec(JsonMapper.builder().findAndAddModules().build());

  private final ObjectMapper mapper;

  private Jackson3Codec(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  /**
   * JSON through a default {@code JsonMapper} with the Jackson modules found on the class path
   * ({@code findAndAddModules()}). The same instance every time.
   */
  public static Jackson3Codec create() {
    return DEFAULT;
  }

  /**
   * JSON through {@code mapper}, e.g. the application's own (Spring Boot 4's {@code JsonMapper}).
   */
  public static Jackson3Codec create(ObjectMapper mapper) {
    return new Jackson3Codec(Objects.requireNonNull(mapper, "mapper"));
  }

  @Override
  public String contentType() {
    return "application/json";
  }

  @Override
  public byte[] encode(Object value) {
    try {
      return mapper.writeValueAsBytes(value);
    } catch (JacksonException e) {
      throw new SerializationException(
          "cannot encode "
              + (value == null ? "null" : value.getClass().getName())
              + " as JSON: "
              + problem(e),
          e);
    }
  }

  @Override
  public <T> T decode(byte[] payload, Class<T> type) {
    Objects.requireNonNull(type, "type");
    if (payload == null) {
      throw new SerializationException(
          "cannot decode JSON payload as " + type.getName() + ": the payload is null", null);
    }
    try {
      return mapper.readValue(payload, type);
    } catch (JacksonException e) {
      throw new SerializationException(
          "cannot decode JSON payload as " + type.getName() + ": " + problem(e), e);
    }
  }

  /** Jackson's own words, then where in the JSON: the path and the line and column. */
  private static String problem(JacksonException e) {
    StringBuilder s = new StringBuilder(String.valueOf(e.getOriginalMessage()));
    String path = path(e);
    TokenStreamLocation at = e.getLocation();
    boolean located = at != null && at.getLineNr() > 0;
    if (!path.isEmpty() || located) {
      s.append(" (at ");
      if (!path.isEmpty()) {
        s.append(path);
      }
      if (located) {
        s.append(path.isEmpty() ? "" : ", ")
            .append("line ")
            .append(at.getLineNr())
            .append(", column ")
            .append(at.getColumnNr());
      }
      s.append(')');
    }
    return s.toString();
  }

  /** {@code $.lines[2].quantity}, or empty at the top. */
  private static String path(JacksonException e) {
    if (e.getPath().isEmpty()) {
      return "";
    }
    StringBuilder s = new StringBuilder("$");
    for (JacksonException.Reference r : e.getPath()) {
      if (r.getPropertyName() != null) {
        s.append('.').append(r.getPropertyName());
      } else if (r.getIndex() >= 0) {
        s.append('[').append(r.getIndex()).append(']');
      }
    }
    return s.toString();
  }

  @Override
  public String toString() {
    return "Jackson3Codec[" + (this == DEFAULT ? "default mapper" : mapper) + "]";
  }
}
