package io.boxline;

/** Turns objects into payload bytes and back. Implementations must be thread-safe. */
public interface PayloadCodec {
  /** The content type written on events this codec encodes, e.g. {@code application/json}. */
  String contentType();

  byte[] encode(Object value);

  <T> T decode(byte[] payload, Class<T> type);

  /** JSON through Jackson with a default {@code ObjectMapper}. */
  static PayloadCodec json() {
    return io.boxline.internal.JacksonCodec.DEFAULT;
  }

  /** JSON through the given Jackson {@code ObjectMapper} (e.g. one with the JavaTimeModule). */
  static PayloadCodec json(com.fasterxml.jackson.databind.ObjectMapper mapper) {
    return new io.boxline.internal.JacksonCodec(mapper);
  }
}
