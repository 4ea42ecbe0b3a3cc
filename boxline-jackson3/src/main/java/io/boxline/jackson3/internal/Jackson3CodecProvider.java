package io.boxline.jackson3.internal;

import io.boxline.PayloadCodec;
import io.boxline.jackson3.Jackson3Codec;
import io.boxline.spi.JsonCodecProvider;
import tools.jackson.databind.cfg.PackageVersion;

/** Makes {@link Jackson3Codec#create()} Boxline's default JSON codec (through ServiceLoader). */
public final class Jackson3CodecProvider implements JsonCodecProvider {
  @Override
  public PayloadCodec jsonCodec() {
    return Jackson3Codec.create();
  }

  @Override
  public String description() {
    return "boxline-jackson3 (Jackson " + PackageVersion.VERSION + ")";
  }
}
