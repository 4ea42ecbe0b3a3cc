package io.boxline.webhook.internal;

import java.nio.charset.StandardCharsets;

/**
 * Header values as the CloudEvents HTTP binding wants them: space, double quote, percent and every
 * character outside printable ASCII percent-encoded (UTF-8 bytes).
 */
public final class HeaderValues {
  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  private HeaderValues() {}

  public static String encode(String value) {
    boolean plain = true;
    for (int i = 0; i < value.length() && plain; i++) {
      plain = !needsEncoding(value.charAt(i));
    }
    if (plain) {
      return value;
    }
    StringBuilder sb = new StringBuilder(value.length() + 16);
    for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (needsEncoding((char) c)) {
        sb.append('%').append(HEX[c >> 4]).append(HEX[c & 0xf]);
      } else {
        sb.append((char) c);
      }
    }
    return sb.toString();
  }

  private static boolean needsEncoding(char c) {
    return c <= 0x20 || c >= 0x7f || c == '"' || c == '%';
  }
}
