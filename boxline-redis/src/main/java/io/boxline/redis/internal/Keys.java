package io.boxline.redis.internal;

import io.boxline.ValidationException;
import io.boxline.spi.PartitionKey;
import java.nio.charset.StandardCharsets;

/**
 * The key layout under a prefix {@code P} (default {@code boxline:}):
 *
 * <pre>
 * P{&lt;group&gt;}:members   ZSET   member id → deadline (epoch millis, Redis's clock)
 * P{&lt;group&gt;}:weights   HASH   member id → weight
 * P{&lt;group&gt;}:status    HASH   member id → last check-in millis, a newline, MemberStatus text
 * P{&lt;group&gt;}:leases    HASH   "&lt;topicId&gt;:&lt;partition&gt;" → epoch, releasing, since, owner (kept when free)
 * P{policy}:groups       HASH   group → GroupPolicy as JSON; field "" is the cluster default
 * P{policy}:stamp        STRING changes with every policy change (GroupView.policyStamp)
 * </pre>
 *
 * The braces are Redis hash tags: a group's keys share one hash slot, so each script touches one
 * slot. Group names are percent-encoded (everything outside {@code A-Z a-z 0-9 . _ -}), so a name
 * can neither reach into another group's keys nor end the hash tag early; a group named {@code
 * policy} shares the policies' slot but none of their keys.
 */
public final class Keys {
  private static final int MAX_PREFIX = 256;

  private final String prefix;

  public Keys(String prefix) {
    this.prefix = validatePrefix(prefix);
  }

  /** The four keys of one group, in the order the scripts take them. */
  public record Group(String members, String weights, String status, String leases) {
    public String[] all() {
      return new String[] {members, weights, status, leases};
    }
  }

  /**
   * A prefix is 1 to 256 printable ASCII characters without spaces, ends with {@code :}, and holds
   * no hash-tag braces or glob characters: keys are shared by every process of a deployment, and
   * {@code redis-cli --scan --pattern 'boxline:*'} must find exactly this deployment's keys.
   */
  public static String validatePrefix(String prefix) {
    if (prefix == null || prefix.isEmpty() || prefix.length() > MAX_PREFIX) {
      throw new ValidationException(
          "Redis keyPrefix must be 1 to "
              + MAX_PREFIX
              + " characters, e.g. 'boxline:', got "
              + quote(prefix));
    }
    if (!prefix.endsWith(":")) {
      throw new ValidationException(
          "Redis keyPrefix must end with ':' (so that 'app:' is not a prefix of 'app2:'), got "
              + quote(prefix)
              + "; use "
              + quote(prefix + ":"));
    }
    for (int i = 0; i < prefix.length(); i++) {
      char c = prefix.charAt(i);
      if (c <= ' ' || c >= 0x7f) {
        throw new ValidationException(
            "Redis keyPrefix must be printable ASCII without spaces, got " + quote(prefix));
      }
      if ("{}*?[]\\".indexOf(c) >= 0) {
        throw new ValidationException(
            "Redis keyPrefix must not contain '"
                + c
                + "' (braces are Redis hash tags, the others glob patterns), got "
                + quote(prefix));
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

  public Group group(String group) {
    String tag = prefix + "{" + encode("group", group) + "}:";
    return new Group(tag + "members", tag + "weights", tag + "status", tag + "leases");
  }

  public String policies() {
    return prefix + "{policy}:groups";
  }

  public String policyStamp() {
    return prefix + "{policy}:stamp";
  }

  /** The field of a partition in the group's leases hash. */
  public static String field(PartitionKey p) {
    return p.topicId() + ":" + p.partition();
  }

  /** The partition of a field {@link #field} wrote. */
  public static PartitionKey partition(String field) {
    int colon = field.lastIndexOf(':');
    return PartitionKey.of(
        Long.parseLong(field.substring(0, colon)), Integer.parseInt(field.substring(colon + 1)));
  }

  /** A member id as given, checked: hash fields and sorted-set members hold any bytes. */
  public static String member(String id) {
    if (id == null || id.isEmpty()) {
      throw new ValidationException("member id must not be empty");
    }
    return id;
  }

  /** A group name as the field of its policy override. */
  public static String policyField(String group) {
    if (group == null || group.isEmpty()) {
      throw new ValidationException("group name must not be empty");
    }
    return group;
  }

  /** Percent-encodes every byte outside {@code A-Z a-z 0-9 . _ -} (UTF-8). */
  static String encode(String what, String name) {
    if (name == null || name.isEmpty()) {
      throw new ValidationException(what + " name must not be empty");
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
