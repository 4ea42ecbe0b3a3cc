package io.boxline.webhook;

import io.boxline.ValidationException;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HMAC-SHA256 signatures of webhook bodies, written {@code sha256=<64 lower-case hex digits>}. The
 * sink signs the exact bytes it sends; a receiver recomputes the signature over the raw request
 * body (before any JSON parsing) with the shared secret and compares with {@link #verify}, which
 * takes constant time.
 *
 * <pre>{@code
 * boolean genuine = WebhookSignature.verify(secret, requestBody, request.header("X-Boxline-Signature"));
 * }</pre>
 */
public final class WebhookSignature {
  /** Prefix of every signature value. */
  public static final String PREFIX = "sha256=";

  private static final String ALGORITHM = "HmacSHA256";

  private WebhookSignature() {}

  /** The signature of {@code body} with {@code secret}: {@code sha256=<hex>}. */
  public static String sign(byte[] secret, byte[] body) {
    return PREFIX + HexFormat.of().formatHex(mac(secret).doFinal(body));
  }

  /** {@link #sign(byte[], byte[])} with the UTF-8 bytes of {@code secret}. */
  public static String sign(String secret, byte[] body) {
    return sign(secret.getBytes(StandardCharsets.UTF_8), body);
  }

  /**
   * True when {@code signature} (a header value, may be null) is the signature of {@code body} with
   * {@code secret}. Compares in constant time.
   */
  public static boolean verify(byte[] secret, byte[] body, String signature) {
    if (signature == null) {
      return false;
    }
    byte[] expected = sign(secret, body).getBytes(StandardCharsets.US_ASCII);
    byte[] actual = signature.trim().getBytes(StandardCharsets.US_ASCII);
    return MessageDigest.isEqual(expected, actual);
  }

  /** {@link #verify(byte[], byte[], String)} with the UTF-8 bytes of {@code secret}. */
  public static boolean verify(String secret, byte[] body, String signature) {
    return verify(secret.getBytes(StandardCharsets.UTF_8), body, signature);
  }

  private static Mac mac(byte[] secret) {
    Objects.requireNonNull(secret, "secret");
    if (secret.length == 0) {
      throw new ValidationException("the webhook signing secret must not be empty");
    }
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(new SecretKeySpec(secret, ALGORITHM));
      return mac;
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
    }
  }
}
