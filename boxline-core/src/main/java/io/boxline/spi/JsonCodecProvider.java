package io.boxline.spi;

import io.boxline.PayloadCodec;

/**
 * Supplies the JSON codec that Boxline uses where no codec is configured ({@link
 * PayloadCodec#json()}): the default of {@link io.boxline.EventType}, {@link
 * io.boxline.TaskSettings} and {@link io.boxline.Event#payloadAs(Class)}.
 *
 * <p>Codec modules ({@code boxline-jackson} for Jackson 2, {@code boxline-jackson3} for Jackson 3)
 * register an implementation in {@code META-INF/services/io.boxline.spi.JsonCodecProvider}; Boxline
 * finds it with {@link java.util.ServiceLoader}. Exactly one provider may be on the class path:
 * with none, or with more than one, the default codec refuses to work and says which dependency to
 * add or remove, or which codec to set. A codec set explicitly never consults providers.
 */
public interface JsonCodecProvider {
  /** The codec, thread-safe; called once and kept. Its content type must be application/json. */
  PayloadCodec jsonCodec();

  /** What provides it, for messages: e.g. {@code boxline-jackson (Jackson 2.18.2)}. */
  String description();
}
