package io.boxline.jackson.internal;

import com.fasterxml.jackson.databind.cfg.PackageVersion;
import io.boxline.PayloadCodec;
import io.boxline.jackson.JacksonCodec;
import io.boxline.spi.JsonCodecProvider;

/** Makes {@link JacksonCodec#create()} Boxline's default JSON codec (through ServiceLoader). */
public final class JacksonCodecProvider implements JsonCodecProvider {
  @Override
  public PayloadCodec jsonCodec() {
    return JacksonCodec.create();
  }

  @Override
  public String description() {
    return "boxline-jackson (Jackson " + PackageVersion.VERSION + ")";
  }
}
