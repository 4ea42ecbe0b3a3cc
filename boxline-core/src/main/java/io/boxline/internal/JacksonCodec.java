package io.boxline.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.boxline.PayloadCodec;
import io.boxline.SerializationException;
import java.io.IOException;

/** JSON codec over Jackson. */
public final class JacksonCodec implements PayloadCodec {
  public static final JacksonCodec DEFAULT =
      new JacksonCodec(new ObjectMapper().findAndRegisterModules());

  private final ObjectMapper mapper;

  public JacksonCodec(ObjectMapper mapper) {
    this.mapper = mapper;
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
          "cannot encode " + value.getClass().getName() + " as JSON: " + e.getOriginalMessage(), e);
    }
  }

  @Override
  public <T> T decode(byte[] payload, Class<T> type) {
    try {
      return mapper.readValue(payload, type);
    } catch (IOException e) {
      throw new SerializationException(
          "cannot decode JSON payload as " + type.getName() + ": " + e.getMessage(), e);
    }
  }
}
