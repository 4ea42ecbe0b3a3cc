package io.boxline.internal;

import io.boxline.PayloadCodec;
import io.boxline.ValidationException;
import io.boxline.spi.JsonCodecProvider;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.stream.Collectors;

/**
 * {@link PayloadCodec#json()}: JSON through the one {@link JsonCodecProvider} on the class path,
 * looked up on first use (encode or decode) and kept. Its content type is known without a provider,
 * so defining event types and task settings never needs one; {@link #require} checks early.
 */
public final class DefaultJsonCodec implements PayloadCodec {
  public static final DefaultJsonCodec INSTANCE = new DefaultJsonCodec();

  /** What to do when no provider is found, without the lead-in. */
  static final String FIX =
      "add io.boxline:boxline-jackson (Jackson 2) or io.boxline:boxline-jackson3 (Jackson 3) to"
          + " the application's dependencies, or set a codec explicitly, e.g."
          + " EventType.codec(JacksonCodec.create(objectMapper)),"
          + " TaskSettings.codec(...) or Tasks.Worker.codec(...)";

  private volatile PayloadCodec delegate;

  private DefaultJsonCodec() {}

  @Override
  public String contentType() {
    return "application/json";
  }

  @Override
  public byte[] encode(Object value) {
    return require("encode " + (value == null ? "null" : value.getClass().getName())).encode(value);
  }

  @Override
  public <T> T decode(byte[] payload, Class<T> type) {
    return require("decode a payload as " + type.getName()).decode(payload, type);
  }

  /**
   * The codec behind the default, found now if not yet.
   *
   * @param purpose what needs it, for the message (e.g. "encode com.acme.OrderPlaced")
   * @throws ValidationException naming the fix when no provider, or more than one, is found
   */
  public PayloadCodec require(String purpose) {
    PayloadCodec d = delegate;
    if (d == null) {
      synchronized (this) {
        d = delegate;
        if (d == null) {
          d = choose(providers(), purpose);
          delegate = d;
        }
      }
    }
    return d;
  }

  /** The providers visible to Boxline's class loader and to the thread's, without duplicates. */
  private static List<JsonCodecProvider> providers() {
    Map<String, JsonCodecProvider> found = new LinkedHashMap<>();
    List<ClassLoader> loaders = new ArrayList<>();
    loaders.add(PayloadCodec.class.getClassLoader());
    ClassLoader context = Thread.currentThread().getContextClassLoader();
    if (context != null && context != loaders.get(0)) {
      loaders.add(context);
    }
    for (ClassLoader loader : loaders) {
      for (JsonCodecProvider p : ServiceLoader.load(JsonCodecProvider.class, loader)) {
        found.putIfAbsent(p.getClass().getName(), p);
      }
    }
    return List.copyOf(found.values());
  }

  /** Picks the one provider's codec; package-private so that tests can give the list. */
  static PayloadCodec choose(List<JsonCodecProvider> providers, String purpose) {
    if (providers.isEmpty()) {
      throw new ValidationException(
          "Boxline has no JSON codec to "
              + purpose
              + ": no codec is set and none is on the class path; "
              + FIX);
    }
    if (providers.size() > 1) {
      throw new ValidationException(
          "Boxline found more than one JSON codec on the class path to "
              + purpose
              + " ("
              + providers.stream()
                  .map(JsonCodecProvider::description)
                  .collect(Collectors.joining(", "))
              + "): keep one of these dependencies, or set a codec explicitly, e.g."
              + " EventType.codec(JacksonCodec.create(objectMapper))");
    }
    PayloadCodec codec = providers.get(0).jsonCodec();
    if (codec == null || !"application/json".equals(codec.contentType())) {
      throw new ValidationException(
          providers.get(0).description()
              + " gave "
              + (codec == null ? "no codec" : "a codec of content type " + codec.contentType())
              + " as the JSON codec");
    }
    return codec;
  }

  @Override
  public String toString() {
    PayloadCodec d = delegate;
    return "PayloadCodec.json()" + (d == null ? "" : " -> " + d);
  }
}
