package io.boxline;

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
 * </ul>
 */
public final class Names {
  public static final int MAX_NAME_LENGTH = 128;
  public static final int MAX_NAMESPACE_DEPTH = 16;
  public static final int MAX_PATH_LENGTH = 512;
  public static final int MAX_SCHEMA_LENGTH = 48;
  public static final int MAX_PREFIX_LENGTH = 16;

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]*");
  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]*");
  private static final Pattern PREFIX = Pattern.compile("[a-z0-9_]*");

  private Names() {}

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

  /** Validates a SQL identifier (schema name) chosen by the operator. */
  public static String requireSchema(String schema) {
    if (schema == null
        || schema.isEmpty()
        || schema.length() > MAX_SCHEMA_LENGTH
        || !IDENTIFIER.matcher(schema).matches()) {
      throw new ValidationException(
          "schema '"
              + schema
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
              + prefix
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
