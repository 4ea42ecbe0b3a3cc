package io.boxline;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.spi.Store;
import java.lang.reflect.Proxy;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class BoxlineBuilderTest {
  /** Validation fails before the store is used, so a store that refuses every call will do. */
  private static final Store UNUSED =
      (Store)
          Proxy.newProxyInstance(
              Store.class.getClassLoader(),
              new Class<?>[] {Store.class},
              (proxy, method, args) -> {
                throw new AssertionError("the store must not be called: " + method.getName());
              });

  @Test
  void sequencerBatchSpacingOutOfRangeIsRefusedWithItsName() {
    assertThatThrownBy(
            () ->
                Boxline.builder()
                    .store(UNUSED)
                    .sequencerBatchSpacing(Duration.ofMillis(101))
                    .build())
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("sequencerBatchSpacing");
    assertThatThrownBy(
            () ->
                Boxline.builder()
                    .store(UNUSED)
                    .sequencerBatchSpacing(Duration.ofMillis(-1))
                    .build())
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("sequencerBatchSpacing");
  }
}
