package io.boxline.etcd.internal;

import io.boxline.ValidationException;
import io.boxline.spi.PartitionKey;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;

/**
 * The key layout under a prefix {@code P} (default {@code /boxline/}):
 *
 * <pre>
 * P groups/&lt;group&gt;/members/&lt;member&gt;           member, attached to an etcd lease of its check-in TTL
 * P groups/&lt;group&gt;/leases/&lt;topicId&gt;/&lt;partition&gt;  lease of a partition (kept when free: it carries the epoch)
 * P policies/cluster                            cluster-wide default GroupPolicy
 * P policies/groups/&lt;group&gt;                     a group's override
 * </pre>
 *
 * Group and member names are percent-encoded (everything outside {@code A-Z a-z 0-9 . _ -}), so no
 * name can reach into another group's keys. A check-in reads everything under {@code P
 * groups/<group>/} in one range.
 */
public final class Keys {
  private static final int MAX_PREFIX = 256;

  private final String prefix;

  public Keys(String prefix) {
    this.prefix = validatePrefix(prefix);
  }

  /**
   * A prefix starts and ends with {@code /}, is at most 256 characters, and holds printable ASCII
   * only (no spaces): keys are shared by every process of a deployment, so a typo must not silently
   * split it.
   */
  public static String validatePrefix(String prefix) {
    if (prefix == null || prefix.length() < 1 || prefix.length() > MAX_PREFIX) {
      throw new ValidationException(
          "etcd key prefix must be 1 to " + MAX_PREFIX + " characters, got " + quote(prefix));
    }
    if (!prefix.startsWith("/") || !prefix.endsWith("/")) {
      throw new ValidationException(
          "etcd key prefix must start and end with '/', got " + quote(prefix));
    }
    if (prefix.contains("//")) {
      throw new ValidationException("etcd key prefix must not contain '//', got " + quote(prefix));
    }
    for (int i = 0; i < prefix.length(); i++) {
      char c = prefix.charAt(i);
      if (c <= ' ' || c >= 0x7f) {
        throw new ValidationException(
            "etcd key prefix must be printable ASCII without spaces, got " + quote(prefix));
      }
    }
    return prefix;
  }

  private static String quote(String s) {
    return s == null ? "null" : "'" + s + "'";
  }

  public String prefix() {
    return prefix;
  }

  public ByteSequence group(String group) {
    return bytes(groupPath(group));
  }

  public String membersPath(String group) {
    return groupPath(group) + "members/";
  }

  public ByteSequence member(String group, String member) {
    return bytes(membersPath(group) + encode(member));
  }

  public String leasesPath(String group) {
    return groupPath(group) + "leases/";
  }

  public ByteSequence leases(String group) {
    return bytes(leasesPath(group));
  }

  public ByteSequence lease(String group, PartitionKey p) {
    return bytes(leasesPath(group) + p.topicId() + "/" + p.partition());
  }

  public ByteSequence clusterPolicy() {
    return bytes(prefix + "policies/cluster");
  }

  public ByteSequence groupPolicy(String group) {
    return bytes(prefix + "policies/groups/" + encode(group));
  }

  private String groupPath(String group) {
    return prefix + "groups/" + encode(group) + "/";
  }

  public static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  /** Range option covering every key that starts with {@code prefix}. */
  public static GetOption prefixRange(ByteSequence prefix) {
    byte[] end = prefix.getBytes();
    // Keys are ASCII (names are percent-encoded) and end with '/', so bumping the last byte works.
    end[end.length - 1]++;
    return GetOption.builder().withRange(ByteSequence.from(end)).build();
  }

  /** Percent-encodes every byte outside {@code A-Z a-z 0-9 . _ -} (UTF-8). */
  static String encode(String name) {
    if (name == null || name.isEmpty()) {
      throw new ValidationException("group and member names must not be empty");
    }
    StringBuilder out = new StringBuilder(name.length());
    for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if ((c >= 'a' && c <= 'z')
          || (c >= 'A' && c <= 'Z')
          || (c >= '0' && c <= '9')
          || c == '.'
          || c == '_'
          || c == '-') {
        out.append((char) c);
      } else {
        out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)));
        out.append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
      }
    }
    return out.toString();
  }
}
