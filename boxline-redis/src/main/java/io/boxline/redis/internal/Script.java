package io.boxline.redis.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The Lua scripts, one per operation that reads and writes (so it is atomic), each with the shared
 * {@code prelude.lua} (Redis's clock, the lease format) in front. They are sent by SHA-1 ({@code
 * EVALSHA}) and by text only when Redis does not know them yet ({@code NOSCRIPT}: first use, a
 * restart, {@code SCRIPT FLUSH}).
 */
public enum Script {
  CHECK_IN("check_in"),
  VIEW("view"),
  LIVE_MEMBERS("live_members"),
  RENEW("renew"),
  LEAVE("leave"),
  ACQUIRE("acquire"),
  MARK_RELEASING("mark_releasing"),
  RELEASE("release"),
  RECLAIM("reclaim"),
  FORCE_RELEASE("force_release"),
  SET_POLICY("set_policy");

  private final String source;
  private final String sha;

  Script(String file) {
    this.source = read("prelude") + read(file);
    this.sha = sha1(source);
  }

  public String source() {
    return source;
  }

  public String sha() {
    return sha;
  }

  private static String read(String name) {
    String path = name + ".lua";
    try (InputStream in = Script.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("boxline-redis: missing resource " + path);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("boxline-redis: cannot read " + path, e);
    }
  }

  private static String sha1(String text) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
      StringBuilder hex = new StringBuilder(40);
      for (byte b : d) {
        hex.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
      }
      return hex.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is part of every JDK", e);
    }
  }
}
