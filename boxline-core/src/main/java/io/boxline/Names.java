package io.boxline;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.regex.Pattern;

/**
 * The rules every name follows. Names are case-sensitive. They are stored as values (bind
 * parameters), never spliced into SQL; the rules exist so that names stay portable (URLs, CLI
 * arguments, broker topic names).
 *
 * <ul>
 *   <li>Namespace segment, topic name, subscription name: 1 to {@value #MAX_NAME_LENGTH} characters
 *       from {@code A-Z a-z 0-9 . _ -}, starting with a letter or digit.
 *   <li>Namespace path: 1 to {@value #MAX_NAMESPACE_DEPTH} segments joined by {@code /}, at most
 *       {@value #MAX_PATH_LENGTH} characters.
 *   <li>SQL identifiers (schema, table prefix): {@code [a-z_][a-z0-9_]*}, schema at most 48
 *       characters and prefix at most 16, so that every derived table and index name fits the
 *       smallest database limit (MySQL: 64).
 *   <li>Event fields: every string is storable on every supported database, so it round-trips
 *       exactly: no NUL character (PostgreSQL cannot store it) and no unpaired UTF-16 surrogate (it
 *       has no UTF-8 form; drivers would silently store '?'). Event type, content type and header
 *       names are labels: not blank, no control characters, at most {@value #MAX_LABEL_LENGTH}
 *       characters. Keys, idempotency keys and sources: at most {@value #MAX_KEY_LENGTH} characters
 *       (an idempotency key is never empty); header values at most {@value
 *       #MAX_HEADER_VALUE_LENGTH}. The SQL {@code publish()} functions apply the same rules.
 * </ul>
 */
public final class Names {
  public static final int MAX_NAME_LENGTH = 128;
  public static final int MAX_NAMESPACE_DEPTH = 16;
  public static final int MAX_PATH_LENGTH = 512;
  public static final int MAX_SCHEMA_LENGTH = 48;
  public static final int MAX_PREFIX_LENGTH = 16;
  public static final int MAX_LABEL_LENGTH = 256;

  /**
   * Longest ordering, idempotency and inbox key: 512 characters (2 KiB of UTF-8 at most) keep the
   * rows that index them within PostgreSQL's B-tree limit of 2,704 bytes.
   */
  public static final int MAX_KEY_LENGTH = 512;

  public static final int MAX_SOURCE_LENGTH = 4096;
  public static final int MAX_HEADER_VALUE_LENGTH = 65_536;

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]*");
  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]*");
  private static final Pattern PREFIX = Pattern.compile("[a-z0-9_]*");

  private Names() {}

  /**
   * Validates a subscription name and returns it: a plain name ({@code audit}), or one that belongs
   * to a namespace ({@code acme/billing/audit}: a namespace path, a slash, a name), at most {@value
   * #MAX_NAME_LENGTH} characters in all. The server requires the second form from tokens limited to
   * some namespaces, so two tenants can use the same short name.
   */
  public static String requireSubscriptionName(String name) {
    if (name == null || name.indexOf('/') < 0) {
      return requireName("subscription name", name);
    }
    if (name.length() > MAX_NAME_LENGTH) {
      throw new ValidationException(
          "subscription name '"
              + abbreviate(name)
              + "' is "
              + name.length()
              + " characters long; the limit is "
              + MAX_NAME_LENGTH);
    }
    int slash = name.lastIndexOf('/');
    try {
      NamespacePath.of(name.substring(0, slash));
    } catch (ValidationException e) {
      throw new ValidationException(
          "subscription name '"
              + abbreviate(name)
              + "' names a namespace that is not valid ("
              + e.getMessage()
              + "); write <namespace>/<name>, e.g. acme/billing/audit");
    }
    requireName("subscription name", name.substring(slash + 1));
    return name;
  }

  /** The namespace a subscription name belongs to, or null for a plain name. */
  public static NamespacePath subscriptionNamespace(String name) {
    int slash = name.lastIndexOf('/');
    return slash < 0 ? null : NamespacePath.of(name.substring(0, slash));
  }

  /** Validates one name (namespace segment, topic, subscription) and returns it. */
  public static String requireName(String what, String name) {
    if (name == null || name.isEmpty()) {
      throw new ValidationException(what + " must not be empty");
    }
    if (name.length() > MAX_NAME_LENGTH) {
      throw new ValidationException(
          what
              + " '"
              + abbreviate(name)
              + "' is "
              + name.length()
              + " characters long; the limit is "
              + MAX_NAME_LENGTH);
    }
    if (!NAME.matcher(name).matches()) {
      throw new ValidationException(
          what
              + " '"
              + abbreviate(name)
              + "' has a character that is not allowed; use A-Z a-z 0-9 . _ - and start with a letter or"
              + " digit");
    }
    return name;
  }

  /**
   * Validates a string that is stored as text (null passes): at most {@code maxLength} characters,
   * no NUL, no unpaired surrogate. {@code what} names the field in the message.
   */
  public static String requireStorable(String what, String value, int maxLength) {
    if (value == null) {
      return null;
    }
    if (value.length() > maxLength) {
      throw new ValidationException(
          what
              + " '"
              + abbreviate(value)
              + "' is "
              + value.length()
              + " characters long; the limit is "
              + maxLength);
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == 0) {
        throw new ValidationException(
            what
                + " has a NUL character (\\u0000) at index "
                + i
                + ", which PostgreSQL cannot store; remove it, or encode the value (Base64, hex)");
      }
      if (Character.isSurrogate(c)) {
        boolean paired =
            Character.isHighSurrogate(c)
                ? i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))
                : i > 0 && Character.isHighSurrogate(value.charAt(i - 1));
        if (!paired) {
          throw new ValidationException(
              what
                  + " has an unpaired UTF-16 surrogate (\\u"
                  + Integer.toHexString(c)
                  + ") at index "
                  + i
                  + ", which has no UTF-8 form and would not be stored as given; fix the string's"
                  + " encoding");
        }
      }
    }
    return value;
  }

  /**
   * The longest duration Boxline takes (a retention age, a group policy's intervals, a setting):
   * 100 years, kept in milliseconds with room to compute with.
   */
  public static final java.time.Duration MAX_DURATION = java.time.Duration.ofDays(36_500);

  private static final java.util.regex.Pattern SHORT_DURATION =
      java.util.regex.Pattern.compile("(\\d{1,18})(ms|s|m|h|d)");

  /**
   * A duration as Boxline reads it everywhere (the server's config and API, the command line): a
   * whole number with a unit — {@code 250ms}, {@code 30s}, {@code 5m}, {@code 2h}, {@code 7d} — or
   * ISO-8601 ({@code PT0.25S}); not negative, at most {@link #MAX_DURATION}.
   *
   * @throws ValidationException naming the text and both forms
   */
  public static java.time.Duration duration(String text) {
    String s = text == null ? "" : text.trim();
    java.time.Duration d;
    java.util.regex.Matcher m = SHORT_DURATION.matcher(s);
    try {
      if (m.matches()) {
        long v = Long.parseLong(m.group(1));
        d =
            switch (m.group(2)) {
              case "ms" -> java.time.Duration.ofMillis(v);
              case "s" -> java.time.Duration.ofSeconds(v);
              case "m" -> java.time.Duration.ofMinutes(v);
              case "h" -> java.time.Duration.ofHours(v);
              default -> java.time.Duration.ofDays(v);
            };
      } else {
        d = java.time.Duration.parse(s);
      }
    } catch (java.time.format.DateTimeParseException | ArithmeticException e) {
      throw new ValidationException(
          "'"
              + (s.length() > 40 ? s.substring(0, 40) + "…" : s)
              + "' is not a duration: write a whole number with ms, s, m, h or d (250ms, 30s, 5m,"
              + " 2h, 7d) or ISO-8601 (PT0.25S)");
    }
    if (d.isNegative()) {
      throw new ValidationException("a duration must not be negative, got '" + s + "'");
    }
    if (d.compareTo(MAX_DURATION) > 0) {
      throw new ValidationException(
          "a duration must be at most 36500d (100 years), got '"
              + (s.length() > 40 ? s.substring(0, 40) + "…" : s)
              + "'");
    }
    return d;
  }

  /**
   * A duration as Boxline writes it everywhere (the server's answers, the command line's output):
   * in the largest unit that holds it whole — {@code 7d}, {@code 2h}, {@code 5m}, {@code 30s},
   * {@code 250ms} — or ISO-8601 when finer than a millisecond; {@link #duration} reads it back.
   */
  public static String durationText(java.time.Duration d) {
    if (d.isNegative() || d.getNano() % 1_000_000 != 0) {
      return d.toString();
    }
    long ms = d.toMillis();
    if (ms == 0) {
      return "0s";
    }
    long[] sizes = {86_400_000L, 3_600_000L, 60_000L, 1_000L, 1L};
    String[] units = {"d", "h", "m", "s", "ms"};
    for (int i = 0; i < sizes.length; i++) {
      if (ms % sizes[i] == 0) {
        return ms / sizes[i] + units[i];
      }
    }
    return d.toString(); // not reached: every whole millisecond count ends at ms
  }

  /** {@code value} when it is at most {@link #MAX_DURATION} (or null); else a clear error. */
  public static java.time.Duration requireStorable(String what, java.time.Duration value) {
    if (value != null && value.compareTo(MAX_DURATION) > 0) {
      throw new ValidationException(what + " must be at most 36500 days (100 years), got " + value);
    }
    return value;
  }

  /** The earliest instant Boxline stores (a delivery time, a start position): 0001-01-01. */
  public static final Instant MIN_INSTANT = Instant.parse("0001-01-01T00:00:00Z");

  /** The latest instant Boxline stores: the end of 9999, to the microsecond. */
  public static final Instant MAX_INSTANT = Instant.parse("9999-12-31T23:59:59.999999Z");

  /**
   * An instant as the databases keep it: to the microsecond (finer digits are dropped, so it reads
   * back as returned), between {@link #MIN_INSTANT} and {@link #MAX_INSTANT}; null stays null.
   */
  public static Instant requireStorable(String what, Instant value) {
    if (value == null) {
      return null;
    }
    if (value.isBefore(MIN_INSTANT) || value.isAfter(MAX_INSTANT)) {
      throw new ValidationException(
          what
              + " "
              + value
              + " is outside the range Boxline can store, "
              + MIN_INSTANT
              + " to "
              + MAX_INSTANT);
    }
    return value.truncatedTo(ChronoUnit.MICROS);
  }

  /**
   * Validates a label (event type, content type, header name): storable, not blank, no control
   * characters, at most {@value #MAX_LABEL_LENGTH} characters.
   */
  public static String requireLabel(String what, String value) {
    if (value == null || value.isBlank()) {
      throw new ValidationException(what + " must not be empty");
    }
    requireStorable(what, value, MAX_LABEL_LENGTH);
    for (int i = 0; i < value.length(); i++) {
      if (Character.isISOControl(value.charAt(i))) {
        throw new ValidationException(
            what
                + " '"
                + abbreviate(value)
                + "' has a control character (\\u"
                + String.format("%04x", (int) value.charAt(i))
                + ") at index "
                + i
                + "; use printable characters only");
      }
    }
    return value;
  }

  /** Validates a SQL identifier (schema name) chosen by the operator. */
  public static String requireSchema(String schema) {
    if (schema == null
        || schema.isEmpty()
        || schema.length() > MAX_SCHEMA_LENGTH
        || !IDENTIFIER.matcher(schema).matches()) {
      throw new ValidationException(
          "schema '"
              + (schema == null ? null : abbreviate(schema))
              + "' is not a valid identifier; use 1 to "
              + MAX_SCHEMA_LENGTH
              + " characters from a-z 0-9 _, starting with a letter or _");
    }
    return schema;
  }

  /** Validates a table prefix (may be empty). */
  public static String requirePrefix(String prefix) {
    if (prefix == null
        || prefix.length() > MAX_PREFIX_LENGTH
        || !PREFIX.matcher(prefix).matches()) {
      throw new ValidationException(
          "table prefix '"
              + (prefix == null ? null : abbreviate(prefix))
              + "' is not valid; use 0 to "
              + MAX_PREFIX_LENGTH
              + " characters from a-z 0-9 _");
    }
    return prefix;
  }

  static String abbreviate(String s) {
    return s.length() <= 40 ? s : s.substring(0, 37) + "...";
  }
}
