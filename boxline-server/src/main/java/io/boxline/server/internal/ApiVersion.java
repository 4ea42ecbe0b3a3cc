package io.boxline.server.internal;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The version of the HTTP API a client was written for, from its {@code Boxline-Api} header: {@code
 * MAJOR.MINOR}. The major is the path's ({@code /v1}); the minor grows when fields, endpoints or
 * optional request fields are added. A server answers a client of its major and of its minor or an
 * older one; a newer minor or another major is refused before anything is done, with the fix. A
 * request without the header is taken as written for this server.
 */
final class ApiVersion {
  private ApiVersion() {}

  static final int MAJOR = 1;
  static final int MINOR = 0;

  /** What the server speaks, sent on every answer in the {@code Boxline-Api} header. */
  static final String CURRENT = MAJOR + "." + MINOR;

  static final String HEADER = "Boxline-Api";

  private static final Pattern FORM = Pattern.compile("(\\d{1,4})\\.(\\d{1,4})");

  /** Refuses (400) a version this server cannot answer; null passes. */
  static void check(String given) {
    if (given == null) {
      return;
    }
    Matcher m = FORM.matcher(given.trim());
    if (!m.matches()) {
      throw new ApiException(
          400,
          "unsupported_version",
          "the Boxline-Api header must be MAJOR.MINOR, such as "
              + CURRENT
              + "; got '"
              + Problems.quote(given)
              + "'");
    }
    int major = Integer.parseInt(m.group(1));
    int minor = Integer.parseInt(m.group(2));
    if (major != MAJOR) {
      throw new ApiException(
          400,
          "unsupported_version",
          "this server speaks the Boxline API "
              + CURRENT
              + " (/v"
              + MAJOR
              + "); the client was written for "
              + major
              + "."
              + minor
              + ": use a client of the "
              + MAJOR
              + ".x line or a server of the "
              + major
              + ".x line");
    }
    if (minor > MINOR) {
      throw new ApiException(
          400,
          "unsupported_version",
          "this server speaks the Boxline API up to "
              + CURRENT
              + "; the client needs "
              + major
              + "."
              + minor
              + ": upgrade the server, or use a client written for "
              + CURRENT
              + " or older");
    }
  }
}
