package io.boxline;

/**
 * Turns objects into payload bytes and back. Implementations must be thread-safe.
 *
 * <p>Boxline's core brings no codec of its own (it depends on the JDK only). JSON comes from a
 * codec module: {@code boxline-jackson} ({@code io.boxline.jackson.JacksonCodec}, Jackson 2) or
 * {@code boxline-jackson3} ({@code io.boxline.jackson3.Jackson3Codec}, Jackson 3). Set one
 * explicitly where a codec is taken ({@link EventType#codec}, {@link TaskSettings#codec}, {@link
 * Tasks.Worker#codec}, {@link TaskOptions#codec}), or put one codec module on the class path and
 * leave the default, {@link #json()}.
 */
public interface PayloadCodec {
  /** The content type written on events this codec encodes, e.g. {@code application/json}. */
  String contentType();

  byte[] encode(Object value);

  <T> T decode(byte[] payload, Class<T> type);

  /**
   * The default codec: JSON through the codec module on the class path ({@code boxline-jackson} or
   * {@code boxline-jackson3}, found with {@link java.util.ServiceLoader} through {@link
   * io.boxline.spi.JsonCodecProvider} on first use, with that module's default mapper). Its content
   * type is {@code application/json}. Encoding or decoding with it throws a {@link
   * ValidationException} that names the fix when no codec module is on the class path, or more than
   * one; {@link Boxline.Builder#build()} checks this for the registered event types at once. For a
   * mapper of your own, set {@code JacksonCodec.create(mapper)} explicitly instead.
   */
  static PayloadCodec json() {
    return io.boxline.internal.DefaultJsonCodec.INSTANCE;
  }
}
