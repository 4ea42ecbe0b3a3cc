package io.boxline.webhook;

import io.boxline.ValidationException;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
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
 *
 * <p>It also signs and verifies the <a href="https://www.standardwebhooks.com/">Standard
 * Webhooks</a> scheme ({@code webhook-id}, {@code webhook-timestamp}, {@code webhook-signature}),
 * whose timestamp lets a receiver refuse replayed requests and whose libraries exist for most
 * languages.
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

  // ------------------------------------------------------------- Standard Webhooks

  /** Prefix of Standard Webhooks secrets: {@code whsec_} and the key in base64. */
  public static final String STANDARD_SECRET_PREFIX = "whsec_";

  /**
   * The key of a Standard Webhooks secret ({@code whsec_<base64>}, or the base64 alone).
   *
   * @throws ValidationException when the secret is empty or not base64
   */
  public static byte[] standardKey(String secret) {
    if (secret == null || secret.isBlank()) {
      throw new ValidationException("the Standard Webhooks secret must not be empty");
    }
    String b64 =
        secret.startsWith(STANDARD_SECRET_PREFIX)
            ? secret.substring(STANDARD_SECRET_PREFIX.length())
            : secret;
    byte[] key;
    try {
      key = Base64.getDecoder().decode(b64.trim());
    } catch (IllegalArgumentException e) {
      throw new ValidationException(
          "the Standard Webhooks secret must be base64, optionally after 'whsec_' (as the"
              + " receiver's library prints it): "
              + e.getMessage());
    }
    if (key.length == 0) {
      throw new ValidationException("the Standard Webhooks secret must not be empty");
    }
    return key;
  }

  /**
   * The Standard Webhooks signature of a message: {@code v1,} and the base64 HMAC-SHA256 of {@code
   * <id>.<timestamp>.<body>}, the value of the {@code webhook-signature} header.
   */
  public static String signStandard(byte[] key, String id, long timestamp, byte[] body) {
    Mac mac = mac(key);
    mac.update((id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8));
    return "v1," + Base64.getEncoder().encodeToString(mac.doFinal(body));
  }

  /**
   * True when the {@code webhook-signature} header value (space-separated signatures, may be null)
   * holds the {@code v1} signature of {@code id}, {@code timestamp} and {@code body} under {@code
   * secret}, and the timestamp (unix seconds) is within {@code tolerance} of {@code clock}'s time,
   * which bounds replays. Compares in constant time.
   */
  public static boolean verifyStandard(
      String secret,
      String id,
      String timestamp,
      byte[] body,
      String signatures,
      Duration tolerance,
      Clock clock) {
    if (id == null || timestamp == null || signatures == null) {
      return false;
    }
    long seconds;
    try {
      seconds = Long.parseLong(timestamp.trim());
    } catch (NumberFormatException e) {
      return false;
    }
    long now = clock.instant().getEpochSecond();
    if (Math.abs(now - seconds) > tolerance.toSeconds()) {
      return false;
    }
    byte[] expected =
        signStandard(standardKey(secret), id, seconds, body).getBytes(StandardCharsets.US_ASCII);
    boolean match = false;
    for (String candidate : signatures.trim().split(" +")) {
      match |= MessageDigest.isEqual(expected, candidate.getBytes(StandardCharsets.US_ASCII));
    }
    return match;
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
