package io.boxline.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.PayloadCodec;
import io.boxline.ValidationException;
import io.boxline.spi.JsonCodecProvider;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How {@link PayloadCodec#json()} picks the codec module's codec: exactly one, else the fix. */
class DefaultJsonCodecTest {
  static PayloadCodec codec(String contentType) {
    return new PayloadCodec() {
      @Override
      public String contentType() {
        return contentType;
      }

      @Override
      public byte[] encode(Object value) {
        return new byte[0];
      }

      @Override
      public <T> T decode(byte[] payload, Class<T> type) {
        return null;
      }
    };
  }

  static JsonCodecProvider provider(String name, PayloadCodec codec) {
    return new JsonCodecProvider() {
      @Override
      public PayloadCodec jsonCodec() {
        return codec;
      }

      @Override
      public String description() {
        return name;
      }
    };
  }

  @Test
  void theOneProvidersCodecIsChosen() {
    PayloadCodec json = codec("application/json");
    assertThat(DefaultJsonCodec.choose(List.of(provider("one", json)), "test")).isSameAs(json);
  }

  @Test
  void noProviderNamesTheModulesToAdd() {
    assertThatThrownBy(() -> DefaultJsonCodec.choose(List.of(), "encode com.acme.Order"))
        .isInstanceOf(ValidationException.class)
        .hasMessage(
            "Boxline has no JSON codec to encode com.acme.Order: no codec is set and none is on the"
                + " class path; "
                + DefaultJsonCodec.FIX);
  }

  @Test
  void twoProvidersAreAmbiguousAndBothAreNamed() {
    PayloadCodec json = codec("application/json");
    assertThatThrownBy(
            () ->
                DefaultJsonCodec.choose(
                    List.of(
                        provider("boxline-jackson (Jackson 2.18.2)", json),
                        provider("boxline-jackson3 (Jackson 3.3.0)", json)),
                    "decode a payload as com.acme.Order"))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("more than one JSON codec")
        .hasMessageContaining("boxline-jackson (Jackson 2.18.2), boxline-jackson3 (Jackson 3.3.0)")
        .hasMessageContaining("keep one of these dependencies, or set a codec explicitly");
  }

  @Test
  void aProviderWhoseCodecIsNotJsonIsRefused() {
    assertThatThrownBy(
            () -> DefaultJsonCodec.choose(List.of(provider("odd", codec("text/plain"))), "test"))
        .isInstanceOf(ValidationException.class)
        .hasMessage("odd gave a codec of content type text/plain as the JSON codec");
  }

  @Test
  void theContentTypeIsKnownWithoutAProvider() {
    assertThat(PayloadCodec.json().contentType()).isEqualTo("application/json");
  }
}
