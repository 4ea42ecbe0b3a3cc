package io.boxline.spring.boot;

import io.boxline.Boxline;

/** Changes the {@link Boxline.Builder} the starter configures, before Boxline starts. */
@FunctionalInterface
public interface BoxlineBuilderCustomizer {
  void customize(Boxline.Builder builder);
}
