package io.boxline.jackson;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.boxline.PayloadCodec;
import io.boxline.SerializationException;
import java.io.IOException;
import java.util.Objects;

/**
 * JSON payloads through Jackson 2 ({@code application/json}). Thread-safe.
 *
 * <pre>{@code
 * EventType.of(OrderPlaced.class, "order.placed", ORDERS).codec(JacksonCodec.create(objectMapper))
 * TaskSettings.defaults().codec(JacksonCodec.create(objectMapper))
 * }</pre>
 *
 * <p>With this module on the class path and no codec set, {@link PayloadCodec#json()} is {@link
 * #create()}. Encoding and decoding failures are {@link SerializationException}s that name the Java
 * type, the problem and, when decoding, where it is in the JSON ({@code $.lines[2].quantity, line
 * 1, column 40}).
 */
public final class JacksonCodec implements PayloadCodec {
  private static final JacksonCodec DEFAULT =
      new JacksonCodec(new ObjectMapper().findAndRegisterModules());

  private final ObjectMapper mapper;

  private JacksonCodec(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  /**
   * JSON through a default {@code ObjectMapper} with the Jackson modules found on the class path
   * ({@code findAndRegisterModules()}: add {@code jackson-datatype-jsr310} for {@code java.time}
   * fields). The same instance every time.
   */
  public static JacksonCodec create() {
    return DEFAULT;
  }

  /**
   * JSON through {@code mapper}, e.g. the application's own (Spring Boot's, with its modules and
   * naming). The mapper must not be reconfigured afterwards.
   */
  public static JacksonCodec create(ObjectMapper mapper) {
    return new JacksonCodec(Objects.requireNonNull(mapper, "mapper"));
  }

  @Override
  public String contentType() {
    return "application/json";
  }

  @Override
  public byte[] encode(Object value) {
    try {
      return mapper.writeValueAsBytes(value);
    } catch (JsonProcessingException e) {
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
    } catch (IOException e) {
      throw new SerializationException(
          "cannot decode JSON payload as " + type.getName() + ": " + problem(e), e);
    }
  }

  /** Jackson's own words, then where in the JSON: the path and the line and column. */
  private static String problem(IOException e) {
    if (!(e instanceof JsonProcessingException j)) {
      return String.valueOf(e.getMessage());
    }
    StringBuilder s = new StringBuilder(String.valueOf(j.getOriginalMessage()));
    String path = j instanceof JsonMappingException m ? path(m) : "";
    JsonLocation at = j.getLocation();
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
  private static String path(JsonMappingException e) {
    if (e.getPath().isEmpty()) {
      return "";
    }
    StringBuilder s = new StringBuilder("$");
    for (JsonMappingException.Reference r : e.getPath()) {
      if (r.getFieldName() != null) {
        s.append('.').append(r.getFieldName());
      } else if (r.getIndex() >= 0) {
        s.append('[').append(r.getIndex()).append(']');
      }
    }
    return s.toString();
  }

  @Override
  public String toString() {
    return "JacksonCodec[" + (this == DEFAULT ? "default mapper" : mapper) + "]";
  }
}
