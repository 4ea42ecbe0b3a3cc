package io.boxline.server.internal;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Ack ids as the HTTP API gives them out: the engine's ack id (topic id, partition, epoch,
 * position) sealed with AES-GCM under a key derived from the caller's token, with the subscription
 * and the member as associated data. A client cannot read the topic id or partition inside, and an
 * ack id that was altered, made up, or given to another member, subscription or token does not
 * open: every such one gets the same answer, before anything is read.
 *
 * <p>The nonce is an HMAC of the plain text (a synthetic IV), so the same ack id seals to the same
 * string and no two different ones share a nonce however many are sealed.
 */
final class AckIds {
  private static final int NONCE = 12;
  private static final int TAG_BITS = 128;
  private static final Base64.Encoder ENCODE = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder DECODE = Base64.getUrlDecoder();

  private AckIds() {}

  static String seal(byte[] key, String subscription, String member, String ackId) {
    try {
      byte[] plain = ackId.getBytes(StandardCharsets.US_ASCII);
      byte[] aad = aad(subscription, member);
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(derive(key, "nonce"), "HmacSHA256"));
      mac.update(aad);
      byte[] nonce = Arrays.copyOf(mac.doFinal(plain), NONCE);
      Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
      c.init(Cipher.ENCRYPT_MODE, aesKey(key), new GCMParameterSpec(TAG_BITS, nonce));
      c.updateAAD(aad);
      byte[] sealed = c.doFinal(plain);
      byte[] out = new byte[NONCE + sealed.length];
      System.arraycopy(nonce, 0, out, 0, NONCE);
      System.arraycopy(sealed, 0, out, NONCE, sealed.length);
      return ENCODE.encodeToString(out);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM is not available", e);
    }
  }

  /** The engine's ack id inside, or null when {@code sealed} is not one given to this member. */
  static String open(byte[] key, String subscription, String member, String sealed) {
    if (sealed == null || sealed.length() > 200) {
      return null;
    }
    byte[] in;
    try {
      in = DECODE.decode(sealed);
    } catch (IllegalArgumentException e) {
      return null;
    }
    if (in.length <= NONCE + TAG_BITS / 8) {
      return null;
    }
    try {
      Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
      c.init(Cipher.DECRYPT_MODE, aesKey(key), new GCMParameterSpec(TAG_BITS, in, 0, NONCE));
      c.updateAAD(aad(subscription, member));
      return new String(c.doFinal(in, NONCE, in.length - NONCE), StandardCharsets.US_ASCII);
    } catch (javax.crypto.AEADBadTagException e) {
      return null;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM is not available", e);
    }
  }

  private static SecretKeySpec aesKey(byte[] key) throws GeneralSecurityException {
    return new SecretKeySpec(derive(key, "encrypt"), 0, 16, "AES");
  }

  /** A key for one use, so the nonce's HMAC and the cipher never share one. */
  private static byte[] derive(byte[] key, String use) throws GeneralSecurityException {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    return mac.doFinal(use.getBytes(StandardCharsets.US_ASCII));
  }

  private static byte[] aad(String subscription, String member) {
    return (subscription + "\n" + member).getBytes(StandardCharsets.UTF_8);
  }
}
